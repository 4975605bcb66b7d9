package io.quotagate.filter.store;

import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.StoreSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/** The {@link BucketStoreProvider}s beside limiter-filter, and the checks of a {@code store:} spec against them. */
final class StoreProviders {
    private StoreProviders() {
    }

    /**
     * The provider of {@code spec}'s type, its options checked; null for a local store (which takes no option).
     *
     * @throws InvalidPlansException naming file, line and field of a bad option
     * @throws IllegalStateException naming the missing artifact if no provider of that type is there
     */
    static BucketStoreProvider checked(StoreSpec spec) {
        if (spec.isLocal()) {
            checkLocal(spec);
            return null;
        }
        BucketStoreProvider provider = providers().stream().filter(p -> p.type().equals(spec.type())).findFirst()
                .orElseThrow(() -> missing(spec));
        spec.checkOptionNames(provider.options());
        provider.check(spec);
        return provider;
    }

    /** A local store takes no option: one a shared type takes is named with that type, as a hint. */
    private static void checkLocal(StoreSpec spec) {
        for (String option : spec.optionNames()) {
            String types = providers().stream().filter(p -> p.options().contains(option)).map(BucketStoreProvider::type)
                    .sorted().collect(Collectors.joining(" or "));
            throw spec.invalid(option, types.isEmpty() ? "unknown key, a store of type: local takes no other key"
                    : "only for a store of type: " + types);
        }
    }

    private static IllegalStateException missing(StoreSpec spec) {
        InvalidPlansException where = spec.invalid("type", spec.type() + " needs io.quotagate:limiter-" + spec.type()
                + " on the class path");
        // file:line when the spec comes from a file; a spec written in code has no line to show
        return new IllegalStateException(where.line() > 0 ? where.getMessage() : where.field() + ": " + where.reason());
    }

    private static List<BucketStoreProvider> providers() {
        // limiter-filter's own loader: the backend module sits beside it (WEB-INF/lib, the class path)
        List<BucketStoreProvider> found = new ArrayList<>();
        ServiceLoader.load(BucketStoreProvider.class, BucketStore.class.getClassLoader()).forEach(found::add);
        return found;
    }
}
