package dev.tern.cli;

/** A bad command line: printed as one line, exit status 2. */
final class UsageException extends RuntimeException {
    UsageException(String message) {
        super(message);
    }
}
