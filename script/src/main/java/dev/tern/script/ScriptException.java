package dev.tern.script;

/**
 * A script that cannot be run (a malformed or unsupported line) or that failed (Tern did not do what it says). The
 * message starts with {@code file:line:}, so one line tells where and what.
 */
public final class ScriptException extends RuntimeException {
    private final String file;
    private final int line;

    public ScriptException(String file, int line, String message) {
        super(file + ":" + line + ": " + message);
        this.file = file;
        this.line = line;
    }

    /** The script's name as given to the runner. */
    public String file() {
        return file;
    }

    /** The line (1-based) the message is about; 0 for the script as a whole. */
    public int line() {
        return line;
    }
}
