package dev.tern.conformance.docs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's Java quick start, tried as a new user would: its pom.xml, its Java file and its shell lines, taken
 * from README.md itself, go into a fresh directory; the shell lines build the project with Maven against the Tern
 * artifacts in the local repository (offline; {@code ./tern test} installs every module below this one before this
 * module's tests run) and run the program, which must print both echoes. Nothing in the project is on its class path
 * but what the README's pom asks for.
 */
class ReadmeQuickStartTest {
    static final String SECTION = "## Java quick start";
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package ([a-z][a-z0-9_.]*);");
    private static final Pattern CLASS = Pattern.compile("(?m)^public (?:final )?class ([A-Z][A-Za-z0-9]*)");
    private static final Pattern TERN_VERSION = Pattern.compile(
        "<groupId>dev\\.tern</groupId>\\s*<artifactId>(tern-[a-z]+)</artifactId>\\s*<version>([^<]+)</version>");

    @Test
    void quickStartBuildsFromAFreshProjectAndRuns(@TempDir Path project) throws Exception {
        final Readme readme = Readme.read();
        final String pom = readme.block(SECTION, "xml");
        final String java = readme.block(SECTION, "java");
        final String shell = readme.block(SECTION, "sh");

        final Matcher dependency = TERN_VERSION.matcher(pom);
        assertTrue(dependency.find(), "the quick start's pom depends on no dev.tern artifact:\n" + pom);
        final String version = System.getProperty("tern.version", dependency.group(2));
        assertEquals(version, dependency.group(2), "the quick start's pom names another version than the build's");
        final Path installed = localRepository().resolve("dev/tern").resolve(dependency.group(1)).resolve(version);
        assertTrue(Files.isDirectory(installed), dependency.group(1) + " " + version + " is not in the local repository ("
            + installed + "): run ./tern test, which installs every module, or mvn -DskipTests install");

        final Matcher pkg = PACKAGE.matcher(java);
        final Matcher cls = CLASS.matcher(java);
        assertTrue(pkg.find() && cls.find(), "the quick start's Java block has no package line or public class");
        final Path source = project.resolve("src/main/java").resolve(pkg.group(1).replace('.', '/'))
            .resolve(cls.group(1) + ".java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, java);
        Files.writeString(project.resolve("pom.xml"), pom);

        final Process process = shell(project, shell);
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(5, TimeUnit.MINUTES), "the quick start did not finish:\n" + output);
        assertEquals(0, process.exitValue(), "the quick start's shell lines failed:\n" + output);
        assertTrue(output.contains("udp: 'hello over UDP' from /198.18.0.2:"), output);
        assertTrue(output.contains("tcp: 'hello over TCP' echoed by /198.18.0.1:7"), output);
    }

    /**
     * Runs {@code lines} with bash in {@code project}, with this JVM's JDK as {@code java} and {@code JAVA_HOME}, and a
     * {@code mvn} that is the build's own Maven, offline, on the build's local repository.
     */
    static Process shell(Path project, String lines) throws IOException {
        final Path bin = Files.createDirectories(project.resolve(".bin"));
        final Path mvn = bin.resolve("mvn");
        Files.writeString(mvn, "#!/bin/sh\nexec '" + maven() + "' -o -B -ntp -Dmaven.repo.local='" + localRepository()
            + "' \"$@\"\n");
        Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
        final Path javaHome = Path.of(System.getProperty("java.home"));
        final ProcessBuilder builder = new ProcessBuilder("bash", "-euo", "pipefail", "-c", lines)
            .directory(project.toFile()).redirectErrorStream(true);
        builder.environment().put("JAVA_HOME", javaHome.toString());
        builder.environment().put("PATH", bin + File.pathSeparator + javaHome.resolve("bin") + File.pathSeparator
            + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        return builder.start();
    }

    /** The Maven running this build ({@code tern.maven.home}, set by the pom), else the first {@code mvn} on PATH. */
    static Path maven() {
        final String home = System.getProperty("tern.maven.home");
        if (home != null && !home.isBlank() && Files.isExecutable(Path.of(home, "bin", "mvn"))) {
            return Path.of(home, "bin", "mvn");
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            final Path candidate = Path.of(dir, "mvn");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("no Maven: neither tern.maven.home nor an mvn on PATH");
    }

    /** The build's local repository ({@code tern.maven.repo.local}, set by the pom), else ~/.m2/repository. */
    static Path localRepository() {
        final String configured = System.getProperty("tern.maven.repo.local");
        return configured != null && !configured.isBlank() ? Path.of(configured)
            : Path.of(System.getProperty("user.home"), ".m2", "repository");
    }

    @Test
    void theQuickStartSectionHoldsOnePomOneJavaFileAndOneShellBlock() throws IOException {
        final List<String> languages = Readme.read().blocks(SECTION).stream().map(Readme.Block::language).toList();
        assertTrue(languages.contains("xml") && languages.contains("java") && languages.contains("sh"),
            "blocks in '" + SECTION + "': " + languages);
    }
}
