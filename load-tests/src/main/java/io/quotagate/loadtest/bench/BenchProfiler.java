package io.quotagate.loadtest.bench;

import one.profiler.AsyncProfiler;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;

/**
 * {@code bench --profile FILE}: async-profiler (its library ships in the load-tests jar, linux-x64)
 * sampling the CPU time of every thread during the measured runs only, written as collapsed stacks
 * per thread for {@code filter-share}. The warm-up stays out: it is mostly interpreted and compiled
 * code and each mode creating its tenants' state, not the per-request work that is compared.
 */
final class BenchProfiler {
    /** CPU time (not wall clock), every millisecond, stacks split by thread (one server pool per mode). */
    private static final String START = "start,event=ctimer,interval=1ms,threads";

    private final AsyncProfiler profiler;
    private final Path file;

    private BenchProfiler(AsyncProfiler profiler, Path file) {
        this.profiler = profiler;
        this.file = file;
    }

    /** Starts sampling now. */
    static BenchProfiler start(Path file) throws IOException {
        AsyncProfiler profiler = requireLoadable();
        profiler.execute(START);
        return new BenchProfiler(profiler, file);
    }

    /** The profiler, or an {@link IllegalArgumentException} saying why {@code --profile} cannot run here. */
    static AsyncProfiler requireLoadable() {
        try {
            return AsyncProfiler.getInstance();
        } catch (RuntimeException | LinkageError e) {
            throw new IllegalArgumentException("--profile: async-profiler could not be loaded (it runs on Linux x64 "
                    + "only): " + e.getMessage(), e);
        }
    }

    /**
     * Why the profile may put the samples of inlined code in the wrong method, or null: without
     * {@code -XX:+DebugNonSafepoints} HotSpot records code positions only at safepoints.
     */
    static String warning() {
        boolean precise = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .anyMatch(a -> a.equals("-XX:+DebugNonSafepoints"));
        return precise ? null : "--profile: run java with -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints, "
                + "or samples of inlined code may be charged to the wrong method";
    }

    /** Stops sampling and writes the collapsed stacks. */
    void stop() throws IOException {
        profiler.execute("stop,collapsed,file=" + file.toAbsolutePath());
    }
}
