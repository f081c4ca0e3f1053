package dev.tern.rawqp.ffm;

/**
 * A shared library the bindings need could not be loaded, or lacks a symbol: says which, and which Debian package
 * provides it.
 */
public final class NativeLibraryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NativeLibraryException(String message) {
        super(message);
    }
}
