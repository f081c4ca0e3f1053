package dev.tern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where {@code tern exec} puts Tern's options for each kind of launcher, and which launcher runs, on made-up JDK
 * homes (a {@code release} file and scripts in {@code bin}) so that no JVM is started.
 */
class ProgramLauncherTest {
    private static final List<String> OPTIONS = List.of("-javaagent:/t/tern-nio.jar=/t/c.properties",
        "--enable-native-access=ALL-UNNAMED");

    private final ByteArrayOutputStream said = new ByteArrayOutputStream();
    private final PrintStream err = new PrintStream(said, true, StandardCharsets.UTF_8);

    /** A JDK home of {@code version} with the launchers {@code java}, {@code jwebserver} and {@code jar}. */
    private static Path jdk(Path dir, String name, String version) throws IOException {
        final Path bin = Files.createDirectories(dir.resolve(name).resolve("bin"));
        Files.writeString(dir.resolve(name).resolve("release"), "JAVA_VERSION=\"" + version + "\"\n");
        for (String tool : List.of("java", "jwebserver", "jar")) {
            assertTrue(Files.writeString(bin.resolve(tool), "#!/bin/sh\nexit 99\n").toFile().setExecutable(true));
        }
        return dir.resolve(name);
    }

    private String said() {
        return said.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aJavaLauncherTakesTheOptionsFirstAndNeedsNoVariable(@TempDir Path dir) throws IOException {
        final Path home = jdk(dir, "jdk-25", "25.0.3");
        final ProgramLauncher launcher = ProgramLauncher.of(List.of(home + "/bin/java", "-cp", "a.jar", "Main"), err,
            home, "");
        assertEquals(List.of(home + "/bin/java", OPTIONS.get(0), OPTIONS.get(1), "-cp", "a.jar", "Main"),
            launcher.command(OPTIONS));
        assertFalse(launcher.needsToolOptions());
        assertEquals("", said());
    }

    @Test
    void aJdkToolOnThePathTakesEachOptionBehindDashJAndNeedsNoVariable(@TempDir Path dir) throws IOException {
        final Path home = jdk(dir, "jdk-25", "25.0.3");
        final ProgramLauncher launcher = ProgramLauncher.of(List.of("jwebserver", "-p", "8000"), err, home,
            home.resolve("bin").toString());
        assertEquals(List.of("jwebserver", "-J" + OPTIONS.get(0), "-J" + OPTIONS.get(1), "-p", "8000"),
            launcher.command(OPTIONS));
        assertFalse(launcher.needsToolOptions(), "a JDK launcher passes -J options to its JVM");
    }

    @Test
    void aJdkToolReachedThroughALinkIsStillAJdkTool(@TempDir Path dir) throws IOException {
        final Path home = jdk(dir, "jdk-25", "25.0.3");
        final Path links = Files.createDirectories(dir.resolve("usr-bin"));
        Files.createSymbolicLink(links.resolve("jwebserver"), home.resolve("bin/jwebserver"));
        final ProgramLauncher launcher = ProgramLauncher.of(List.of(links + "/jwebserver"), err, home, "");
        assertEquals(List.of(links + "/jwebserver", "-J" + OPTIONS.get(0), "-J" + OPTIONS.get(1)),
            launcher.command(OPTIONS));
    }

    @Test
    void aScriptOutsideAJdkRunsAsGivenAndNeedsTheVariable(@TempDir Path dir) throws IOException {
        final Path home = jdk(dir, "jdk-25", "25.0.3");
        final Path script = Files.writeString(dir.resolve("run.sh"), "#!/bin/sh\nexec java Main\n");
        assertTrue(script.toFile().setExecutable(true));
        final ProgramLauncher launcher = ProgramLauncher.of(List.of(script.toString(), "x"), err, home, "");
        assertEquals(List.of(script.toString(), "x"), launcher.command(OPTIONS));
        assertTrue(launcher.needsToolOptions());
    }

    @Test
    void anOldJdkToolOnThePathIsReplacedByTernsOwnWithOneLine(@TempDir Path dir) throws IOException {
        final Path own = jdk(dir, "jdk-25", "25.0.3");
        final Path old = jdk(dir, "jdk-17", "17.0.15");
        final ProgramLauncher launcher = ProgramLauncher.of(List.of("jar", "--version"), err, own,
            old.resolve("bin").toString());
        assertEquals(List.of(own + "/bin/jar", "-J" + OPTIONS.get(0), "-J" + OPTIONS.get(1), "--version"),
            launcher.command(OPTIONS));
        assertEquals("tern: exec: jar on PATH (" + old + "/bin/jar) is Java 17, older than 25; running " + own
            + "/bin/jar (Java " + Runtime.version().feature() + ") instead", said().strip());
    }

    @Test
    void anOldJdkToolNamedByItsPathIsRefusedNamingBothVersions(@TempDir Path dir) throws IOException {
        final Path own = jdk(dir, "jdk-25", "25.0.3");
        final Path old = jdk(dir, "jdk-17", "17.0.15");
        final CommandFailure failure = assertThrows(CommandFailure.class,
            () -> ProgramLauncher.of(List.of(old + "/bin/jwebserver"), err, own, ""));
        assertEquals("exec: " + old + "/bin/jwebserver is Java 17; Tern needs 25 or newer (this tern runs on Java "
            + Runtime.version().feature() + ": " + own + "/bin/jwebserver)", failure.getMessage());
    }

    @Test
    void anOldToolThatTernsJdkLacksIsRefusedEvenOnThePath(@TempDir Path dir) throws IOException {
        final Path own = jdk(dir, "jdk-25", "25.0.3");
        final Path old = jdk(dir, "jdk-17", "17.0.15");
        assertTrue(Files.writeString(old.resolve("bin/jjs"), "#!/bin/sh\n").toFile().setExecutable(true));
        final CommandFailure failure = assertThrows(CommandFailure.class,
            () -> ProgramLauncher.of(List.of("jjs"), err, own, old.resolve("bin").toString()));
        assertTrue(failure.getMessage().startsWith("exec: jjs on PATH (" + old + "/bin/jjs) is Java 17; Tern needs 25"),
            failure.getMessage());
    }

    @Test
    void releaseFileVersionsOfEitherScheme(@TempDir Path dir) throws IOException {
        assertEquals(8, ProgramLauncher.javaVersion(jdk(dir, "jdk-8", "1.8.0_402")));
        assertEquals(25, ProgramLauncher.javaVersion(jdk(dir, "jdk-25", "25")));
        assertEquals(21, ProgramLauncher.javaVersion(jdk(dir, "jdk-21", "21.0.2+13")));
        assertEquals(0, ProgramLauncher.javaVersion(dir.resolve("nothing")));
    }
}
