package io.quotagate.filter.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Collects the messages a java.util.logging logger publishes at or above a level; close to detach. */
public final class LogCapture extends Handler implements AutoCloseable {
    private final Logger logger;
    private final Level minimum;
    private final List<String> messages = new ArrayList<>();

    private LogCapture(Logger logger, Level minimum) {
        this.logger = logger;
        this.minimum = minimum;
        logger.addHandler(this);
    }

    /** Starts capturing the messages of the logger named after {@code type} (as System.Logger names them). */
    public static LogCapture of(Class<?> type, Level minimum) {
        return new LogCapture(Logger.getLogger(type.getName()), minimum);
    }

    @Override
    public void publish(LogRecord r) {
        if (r.getLevel().intValue() < minimum.intValue()) return;
        synchronized (messages) {
            messages.add(r.getMessage());
        }
    }

    /** A copy of the messages captured so far. */
    public List<String> messages() {
        synchronized (messages) {
            return new ArrayList<>(messages);
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
