package dev.tern.testkit.netns;

/** Setting up, using or removing a test network namespace failed; the message says which command or call. */
public final class NetnsException extends RuntimeException {
    public NetnsException(String message) {
        super(message);
    }

    public NetnsException(String message, Throwable cause) {
        super(message, cause);
    }
}
