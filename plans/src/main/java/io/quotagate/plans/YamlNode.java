package io.quotagate.plans;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A YAML value with the line it starts on, so every validation error can name its line. */
sealed interface YamlNode {
    int line();

    /** A human name for the node's kind, used in "expected a list, found a map". */
    String kind();

    record Mapping(Map<String, YamlNode> entries, Map<String, Integer> keyLines, int line) implements YamlNode {
        Mapping() {
            this(new LinkedHashMap<>(), new LinkedHashMap<>(), 0);
        }

        @Override
        public String kind() {
            return "a map";
        }
    }

    record Sequence(List<YamlNode> items, int line) implements YamlNode {
        @Override
        public String kind() {
            return "a list";
        }
    }

    /** A scalar; {@code type} tells how YAML typed it (an unquoted 10 is INT, "10" is STRING). */
    record Scalar(String text, Type type, int line) implements YamlNode {
        enum Type { STRING, INT, FLOAT, BOOLEAN, NULL }

        @Override
        public String kind() {
            return switch (type) {
                case STRING -> "a string";
                case INT -> "an integer";
                case FLOAT -> "a decimal number";
                case BOOLEAN -> "a boolean";
                case NULL -> "nothing";
            };
        }
    }
}
