package dev.tern.rawqp.testing;

import dev.tern.core.testing.ExternalTools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Compiles and runs small C programs against the installed rdma-core headers, for the tests that compare the Java
 * bindings with what gcc says. Without gcc or the headers the calling test is skipped with the reason, except under
 * CI ({@code TERN_REQUIRE_NETNS=1}), where {@code ./tern test} has installed both and a missing one fails.
 */
public final class CPrograms {
    public static final Path VERBS_H = Path.of("/usr/include/infiniband/verbs.h");
    public static final Path MLX5DV_H = Path.of("/usr/include/infiniband/mlx5dv.h");
    private static final Path BUILD = Path.of("target", "c-programs");

    private CPrograms() {
    }

    /** Skips (or, under CI, fails) unless gcc and both headers are installed. */
    public static void requireToolchain() {
        ExternalTools.require("gcc", "gcc");
        for (Path header : List.of(VERBS_H, MLX5DV_H)) {
            if (!Files.isRegularFile(header)) {
                ExternalTools.skip(header + " not found; install the Debian package libibverbs-dev (./tern test does when root)");
            }
        }
    }

    /** Writes {@code source} to target/c-programs/{@code name}.c and compiles it; fails with gcc's messages. Returns the executable. */
    public static Path compile(String name, String source) {
        try {
            Files.createDirectories(BUILD);
            final Path c = BUILD.resolve(name + ".c");
            final Path executable = BUILD.resolve(name);
            Files.writeString(c, source, StandardCharsets.UTF_8);
            ExternalTools.run(Duration.ofSeconds(60), "gcc", "-std=gnu11", "-O1", "-Wall", "-o", executable.toString(), c.toString())
                .orFail("gcc " + c);
            return executable;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs a compiled program with {@code stdin} (may be empty) and returns its standard output. */
    public static String run(Path executable, String stdin) {
        try {
            final Path input = Files.createTempFile("tern-c-input", ".txt");
            try {
                Files.writeString(input, stdin, StandardCharsets.UTF_8);
                final List<String> command = new ArrayList<>(List.of("sh", "-c", "exec \"$0\" < \"$1\"", executable.toAbsolutePath().toString(),
                    input.toString()));
                return ExternalTools.run(Duration.ofSeconds(60), command).orFail(executable.toString()).stdout();
            } finally {
                Files.deleteIfExists(input);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
