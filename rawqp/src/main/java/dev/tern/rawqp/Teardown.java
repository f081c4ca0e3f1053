package dev.tern.rawqp;

import java.util.ArrayList;
import java.util.List;

/**
 * Control-plane objects to destroy, in reverse order of creation (QP before CQs, MR before PD, PD before the device
 * context, the slab last because the MR points into it). Each step runs even if an earlier one fails; the first
 * failure is rethrown with the others suppressed. Not thread-safe; used when opening and closing a link.
 */
final class Teardown implements AutoCloseable {
    private final List<AutoCloseable> steps = new ArrayList<>();
    private boolean closed;

    /** Adds a step that runs before every step added earlier. */
    void add(AutoCloseable step) {
        steps.add(step);
    }

    /** Runs every step; used when opening fails part-way, adding any failure to {@code cause}. */
    void closeAfterFailure(Throwable cause) {
        try {
            close();
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        for (int i = steps.size() - 1; i >= 0; i--) {
            try {
                steps.get(i).close();
            } catch (Exception e) {
                final RuntimeException wrapped = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                if (failure == null) {
                    failure = wrapped;
                } else {
                    failure.addSuppressed(wrapped);
                }
            }
        }
        steps.clear();
        if (failure != null) {
            throw failure;
        }
    }
}
