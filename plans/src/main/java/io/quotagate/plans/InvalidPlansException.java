package io.quotagate.plans;

/**
 * A plans file that cannot be used. The message names the file, the line and the field:
 * {@code plans.yml:7: plans.free.limits[0].capacity: must be > 0, was 0}.
 */
public final class InvalidPlansException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String file;
    private final int line;
    private final String field;
    private final String reason;

    InvalidPlansException(String file, int line, String field, String reason) {
        super(file + ":" + (line > 0 ? line + ":" : "") + " " + (field.isEmpty() ? "" : field + ": ") + reason);
        this.file = file;
        this.line = line;
        this.field = field;
        this.reason = reason;
    }

    /** The file (or resource) the error is in. */
    public String file() {
        return file;
    }

    /** The 1-based line of the offending value, or 0 if the whole file is at fault. */
    public int line() {
        return line;
    }

    /** The dotted path of the offending field ({@code plans.free.limits[0].capacity}), or empty. */
    public String field() {
        return field;
    }

    /** Why the value is refused. */
    public String reason() {
        return reason;
    }
}
