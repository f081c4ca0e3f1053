package dev.tern.conformance.replay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The committed captures in {@code pcaps/} (found through the {@code tern.pcaps.dir} property the pom sets). */
public final class Pcaps {
    private Pcaps() {
    }

    public static Path directory() {
        final String configured = System.getProperty("tern.pcaps.dir");
        if (configured == null) {
            throw new IllegalStateException("tern.pcaps.dir is not set (conformance/pom.xml sets it for surefire)");
        }
        return Path.of(configured);
    }

    public static Path file(String name) {
        return directory().resolve(name);
    }

    /** Every {@code .pcap} in the directory, by name. */
    public static List<Path> all() {
        try (Stream<Path> files = Files.list(directory())) {
            return files.filter(p -> p.getFileName().toString().endsWith(".pcap")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static Capture read(String name) {
        return Capture.read(file(name));
    }
}
