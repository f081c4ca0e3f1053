package dev.tern.cli;

/** A connection trace CSV that breaks its contract; the message names the file, the line and what is wrong. */
final class TraceFormatException extends Exception {
    TraceFormatException(String file, long line, String reason) {
        super(file + " line " + line + ": " + reason);
    }

    TraceFormatException(String file, String reason) {
        super(file + ": " + reason);
    }
}
