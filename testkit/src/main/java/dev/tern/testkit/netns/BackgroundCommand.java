package dev.tern.testkit.netns;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A program running in the background for a test (tcpdump, a UDP listener, ping): its output is collected in
 * temporary files; {@link #stop()} ends it by its PID with SIGTERM (so tcpdump flushes its capture), then SIGKILL
 * if it lingers. {@link #close()} stops it and deletes the files.
 */
public final class BackgroundCommand implements AutoCloseable {
    private static final Duration GRACE = Duration.ofSeconds(5);

    private final List<String> command;
    private final Process process;
    private final Path out;
    private final Path err;
    private boolean closed;

    private BackgroundCommand(List<String> command, Process process, Path out, Path err) {
        this.command = command;
        this.process = process;
        this.out = out;
        this.err = err;
    }

    static BackgroundCommand start(List<String> command) {
        Path out = null;
        Path err = null;
        try {
            out = Files.createTempFile("tern-bg", ".out");
            err = Files.createTempFile("tern-bg", ".err");
            final Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            return new BackgroundCommand(command, process, out, err);
        } catch (IOException e) {
            Commands.deleteQuietly(out);
            Commands.deleteQuietly(err);
            throw new NetnsException("cannot start `" + String.join(" ", command) + "`: " + e.getMessage(), e);
        }
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public String stdout() {
        return read(out);
    }

    /** How many bytes the program has written to its stdout so far (0 once closed); reads nothing of them. */
    public long stdoutBytes() {
        try {
            return closed ? 0 : Files.size(out);
        } catch (IOException e) {
            return 0;
        }
    }

    public String stderr() {
        return read(err);
    }

    private String read(Path path) {
        try {
            return closed ? "" : Files.readString(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * Waits until {@code text} appears in the program's stdout or stderr (e.g. tcpdump's "listening on"); throws
     * {@link NetnsException} quoting the output if it does not within {@code timeout} or the program exits first.
     */
    public BackgroundCommand awaitOutput(String text, Duration timeout) {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (stderr().contains(text) || stdout().contains(text)) {
                return this;
            }
            if (!process.isAlive() || deadline - System.nanoTime() < 0) {
                throw new NetnsException("`" + String.join(" ", command) + "` did not print '" + text + "' within "
                    + timeout + (process.isAlive() ? "" : " (exited " + process.exitValue() + ")") + ": " + stderr() + stdout());
            }
            sleepMillis(10);
        }
    }

    /** Waits for the program to exit by itself; returns its exit code, or throws after {@code timeout}. */
    public int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new NetnsException("`" + String.join(" ", command) + "` still running after " + timeout);
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NetnsException("interrupted waiting for `" + String.join(" ", command) + "`", e);
        }
    }

    /**
     * SIGTERM to this PID, then SIGKILL after a grace period; returns the exit code. Idempotent. The processes it
     * started (a shell's pipeline) are ended the same way, each by its own PID, taken before the parent goes.
     */
    public int stop() {
        final List<ProcessHandle> children = process.descendants().toList();
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        for (ProcessHandle child : children) {
            if (child.isAlive()) {
                child.destroy();
            }
        }
        for (ProcessHandle child : children) {
            try {
                child.onExit().get(GRACE.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                child.destroyForcibly();
            }
        }
        return process.isAlive() ? -1 : process.exitValue();
    }

    @Override
    public void close() {
        if (!closed) {
            stop();
            closed = true;
            Commands.deleteQuietly(out);
            Commands.deleteQuietly(err);
        }
    }

    static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NetnsException("interrupted", e);
        }
    }
}
