package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;

/**
 * {@code store:}: a type name ({@code local}, the default) and the options under it, kept as written
 * ({@link StoreSpec}). The options are the store type's to check (its provider, in the module that
 * implements the type): the plans file knows no backend.
 */
final class StoreBinder {
    private final FieldCursor in;

    StoreBinder(FieldCursor in) {
        this.in = in;
    }

    StoreSpec store(YamlNode node) {
        if (node == null) return StoreSpec.local();
        Mapping m = in.mapping(node, "store", null);
        YamlNode typeNode = m.entries().get("type");
        String type = typeNode == null ? StoreSpec.LOCAL : in.matching(typeNode, "store.type", FieldCursor.NAME);
        return StoreSpec.fromFile(type, m, in.source());
    }
}
