package dev.tern.testkit.netns;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Runs the external programs the namespace helpers need ({@code ip}, {@code ethtool}, {@code tcpdump}, ...), each
 * bounded in time. A command that overruns is killed by its own PID, never by name.
 */
public final class Commands {
    private static final List<String> EXTRA_DIRECTORIES = List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin");

    private Commands() {
    }

    /** The program's path on {@code PATH} (or the sbin directories, which a non-login root shell may lack). */
    public static Optional<Path> find(String program) {
        final List<String> directories = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
        directories.addAll(EXTRA_DIRECTORIES);
        for (String directory : directories) {
            if (directory.isEmpty()) {
                continue;
            }
            final Path candidate = Path.of(directory, program);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The program's path, or a {@link NetnsException} naming the Debian package that provides it. */
    public static String require(String program, String debianPackage) {
        return find(program).orElseThrow(() -> new NetnsException(program + " not found; install the Debian package "
            + debianPackage)).toString();
    }

    /** Runs {@code command} to completion within {@code timeout}; kills it by PID and throws when it overruns. */
    public static CommandResult run(Duration timeout, List<String> command) {
        final List<String> copy = List.copyOf(command);
        Path out = null;
        Path err = null;
        try {
            out = Files.createTempFile("tern-cmd", ".out");
            err = Files.createTempFile("tern-cmd", ".err");
            final Process process = new ProcessBuilder(copy).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
                throw new NetnsException("`" + String.join(" ", copy) + "` did not finish within " + timeout + " (killed pid " + process.pid() + ")");
            }
            return new CommandResult(copy, process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new NetnsException("cannot run `" + String.join(" ", copy) + "`: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NetnsException("interrupted while running `" + String.join(" ", copy) + "`", e);
        } finally {
            deleteQuietly(out);
            deleteQuietly(err);
        }
    }

    public static CommandResult run(Duration timeout, String... command) {
        return run(timeout, List.of(command));
    }

    /** Starts {@code command} in the background; its output goes to temporary files until it is closed. */
    public static BackgroundCommand start(List<String> command) {
        return BackgroundCommand.start(List.copyOf(command));
    }

    static void deleteQuietly(Path path) {
        if (path != null) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException ignored) {
                // A temp file left behind is harmless; the command's result matters more.
            }
        }
    }
}
