package dev.tern.cli;

/** The command could not do its job (no device, no privilege, ...): printed as one line, exit status 1. */
final class CommandFailure extends RuntimeException {
    CommandFailure(String message) {
        super(message);
    }

    CommandFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
