package dev.tern.core.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs external programs (tshark, ip, ping) from tests. A missing program skips the test with a clear reason, except
 * under CI ({@code TERN_REQUIRE_NETNS=1}, set by {@code .ci/run}), where it fails: there {@code ./tern test} has
 * installed every tool, so a missing one is a real fault.
 */
public final class ExternalTools {
    private ExternalTools() {
    }

    public static boolean required() {
        return "1".equals(System.getenv("TERN_REQUIRE_NETNS"));
    }

    /** Skips (or, under CI, fails) unless {@code program} is on the PATH; returns its path. */
    public static Path require(String program, String debianPackage) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            final Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        skip(program + " not found; install the Debian package " + debianPackage + " (./tern test does when root)");
        return null;
    }

    /**
     * Skips the calling test with {@code reason}, or fails it under CI ({@code TERN_REQUIRE_NETNS=1}): there every
     * tool and capability is installed, so whatever a test lacks is a fault. Every skip site of the project's tests
     * goes through here, apart from the on-demand tests listed in {@code .ci/allowed-skips}.
     */
    public static void skip(String reason) {
        if (required()) {
            throw new AssertionError("TERN_REQUIRE_NETNS=1 but " + reason);
        }
        Assumptions.abort(reason);
    }

    /** The result of a finished program. */
    public record Result(int exitCode, String stdout, String stderr) {
        public Result orFail(String what) {
            if (exitCode != 0) {
                throw new AssertionError(what + " exited " + exitCode + ": " + stderr + stdout);
            }
            return this;
        }
    }

    /** Runs a command to completion within {@code timeout}; kills it (by its own PID) when it overruns. */
    public static Result run(Duration timeout, String... command) {
        return run(timeout, List.of(command));
    }

    public static Result run(Duration timeout, List<String> command) {
        try {
            final Path out = Files.createTempFile("tern-tool", ".out");
            final Path err = Files.createTempFile("tern-tool", ".err");
            try {
                final Process process = new ProcessBuilder(new ArrayList<>(command))
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                    throw new AssertionError(String.join(" ", command) + " did not finish within " + timeout);
                }
                return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new AssertionError("cannot run " + String.join(" ", command) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted running " + command, e);
        }
    }
}
