package io.quotagate.containers;

import org.junit.jupiter.api.Assumptions;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * What the virtual-thread legs of the matrix need from the JDK. The code is compiled with {@code --release 17}, where
 * {@code Thread.isVirtual()} and {@code Executors.newVirtualThreadPerTaskExecutor()} do not exist: they are looked up
 * by reflection, and on a JDK before 21 a leg is skipped by an assumption that says why (never a silent pass).
 */
final class VirtualThreadLeg {
    /** Virtual threads are final from JDK 21 (JEP 444). */
    static final int FIRST_JDK = 21;

    private static final Method IS_VIRTUAL = method(Thread.class, "isVirtual");

    private VirtualThreadLeg() {
    }

    static boolean available() {
        return Runtime.version().feature() >= FIRST_JDK;
    }

    /** Skips the calling test or class on a JDK before 21, naming the JVM and where the leg does run. */
    static void assumeAvailable() {
        Assumptions.assumeTrue(available(), () -> "virtual threads need JDK " + FIRST_JDK + " or later (JEP 444); this"
                + " JVM is " + Runtime.version() + ", so the virtual-thread leg does not run here (it runs on JDK 21+,"
                + " e.g. .ci/run's JDK 25 leg)");
    }

    /** Whether {@code thread} is a virtual thread; false on a JDK without them. */
    static boolean isVirtual(Thread thread) {
        if (IS_VIRTUAL == null) return false;
        try {
            return (Boolean) IS_VIRTUAL.invoke(thread);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code Executors.newVirtualThreadPerTaskExecutor()}: call after {@link #assumeAvailable()}. */
    static ExecutorService newVirtualThreadPerTaskExecutor() {
        try {
            return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no virtual threads on " + Runtime.version(), e);
        }
    }

    /** Starts {@code task} on a new virtual thread named {@code name}: call after {@link #assumeAvailable()}. */
    static Thread startVirtualThread(String name, Runnable task) {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
            builder = ofVirtual.getMethod("name", String.class).invoke(builder, name);
            return (Thread) ofVirtual.getMethod("start", Runnable.class).invoke(builder, task);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no virtual threads on " + Runtime.version(), e);
        }
    }

    private static Method method(Class<?> type, String name) {
        try {
            return type.getMethod(name);
        } catch (NoSuchMethodException absent) {
            return null;
        }
    }
}
