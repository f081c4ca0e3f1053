package dev.tern.lab;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The shipped matrix: the scenario files under {@code dev/tern/lab/scenarios/} named in its {@code index}, read in
 * that order. They are copied to a temporary directory first, so that a scenario's trace file is found beside it.
 */
public final class LabMatrix {
    private static final String ROOT = "/dev/tern/lab/scenarios/";

    private LabMatrix() {
    }

    public static List<ScenarioSpec> shipped() {
        try {
            final Path dir = Files.createTempDirectory("tern-lab");
            final List<ScenarioSpec> specs = new ArrayList<>();
            final List<Path> copied = new ArrayList<>();
            for (String name : resource("index").lines().map(String::strip).filter(s -> !s.isEmpty()).toList()) {
                final Path file = dir.resolve(name);
                Files.writeString(file, resource(name));
                copied.add(file);
            }
            for (Path file : copied) {
                if (file.toString().endsWith(".lab")) {
                    specs.add(ScenarioFile.read(file));
                }
            }
            for (Path file : copied) {
                Files.deleteIfExists(file);
            }
            Files.deleteIfExists(dir);
            return specs;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = LabMatrix.class.getResourceAsStream(ROOT + name)) {
            if (in == null) {
                throw new IOException("missing lab resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
