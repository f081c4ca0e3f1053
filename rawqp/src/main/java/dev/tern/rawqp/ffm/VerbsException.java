package dev.tern.rawqp.ffm;

/**
 * A control-plane verbs call failed: names the call, the errno it reported and, where we know one, what usually
 * causes it. Never thrown on the data path.
 */
public final class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int errno;

    public VerbsException(String call, int errno, String hint) {
        super(call + " failed (" + Errno.describe(errno) + ")" + (hint == null || hint.isEmpty() ? "" : ": " + hint));
        this.call = call;
        this.errno = errno;
    }

    /** The C function that failed, e.g. {@code ibv_create_qp}. */
    public String call() {
        return call;
    }

    public int errno() {
        return errno;
    }
}
