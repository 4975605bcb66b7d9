package io.quotagate.plans;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Scalar;
import io.quotagate.plans.YamlNode.Sequence;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * YAML text to a tree of {@link YamlNode}s that remember their lines. Jackson's streaming parser
 * rather than its object mapper: a bound object forgets where each value was written, and a
 * duplicate key would silently replace the first.
 */
final class YamlTree {
    private static final YAMLFactory YAML = YAMLFactory.builder().build();

    private final FieldCursor cursor;

    private YamlTree(FieldCursor cursor) {
        this.cursor = cursor;
    }

    /** The single document of {@code yaml}; errors name {@code cursor}'s file. */
    static YamlNode read(FieldCursor cursor, String yaml) {
        YamlTree t = new YamlTree(cursor);
        try (JsonParser p = YAML.createParser(yaml)) {
            if (p.nextToken() == null) throw cursor.error(0, "", "the file is empty");
            YamlNode root = t.node(p);
            if (p.nextToken() != null) throw cursor.error(line(p), "", "only one YAML document is allowed");
            return root;
        } catch (JsonProcessingException e) {
            int line = e.getLocation() == null ? 0 : e.getLocation().getLineNr();
            throw cursor.error(line, "", "not valid YAML: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw cursor.error(0, "", "cannot read: " + e.getMessage());
        }
    }

    private YamlNode node(JsonParser p) throws IOException {
        int line = line(p);
        JsonToken t = p.currentToken();
        switch (t) {
            case START_OBJECT -> {
                Mapping m = new Mapping(new LinkedHashMap<>(), new LinkedHashMap<>(), line);
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String key = p.currentName();
                    int keyLine = line(p);
                    if (m.entries().containsKey(key)) throw cursor.error(keyLine, key, "duplicate key");
                    p.nextToken();
                    m.keyLines().put(key, keyLine);
                    m.entries().put(key, node(p));
                }
                return m;
            }
            case START_ARRAY -> {
                List<YamlNode> items = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) items.add(node(p));
                return new Sequence(items, line);
            }
            case VALUE_STRING -> {
                return new Scalar(p.getText(), Scalar.Type.STRING, line);
            }
            case VALUE_NUMBER_INT -> {
                return new Scalar(p.getText(), Scalar.Type.INT, line);
            }
            case VALUE_NUMBER_FLOAT -> {
                return new Scalar(p.getText(), Scalar.Type.FLOAT, line);
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return new Scalar(p.getText(), Scalar.Type.BOOLEAN, line);
            }
            case VALUE_NULL -> {
                return new Scalar("", Scalar.Type.NULL, line);
            }
            default -> throw cursor.error(line, "", "unsupported YAML construct " + t);
        }
    }

    private static int line(JsonParser p) {
        return p.currentTokenLocation().getLineNr();
    }
}
