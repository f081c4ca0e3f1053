package dev.tern.cli;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The launcher that starts a {@code tern exec} program's JVM, and how Tern's options reach that JVM. A {@code java}
 * launcher takes them as its first options; a JDK tool ({@code jwebserver}, {@code jshell}, any launcher in a JDK's
 * {@code bin} beside its {@code java}) takes each behind {@code -J}, which the JDK's launchers pass to their JVM.
 * Neither JVM then prints the "Picked up JAVA_TOOL_OPTIONS" line the variable brings. Anything else (a script that
 * ends in a JVM) needs the variable. A launcher older than {@link #MIN_JAVA} cannot load Tern's agent (its class
 * files, and the flags it needs, are 25's): found on PATH, it is replaced by the same launcher of the JDK tern runs
 * on, said in one line; named by its path, or with no such launcher in tern's JDK, it is refused in one line naming
 * both versions.
 */
final class ProgramLauncher {
    /** The JDK feature release Tern's agent and provider are compiled for. */
    static final int MIN_JAVA = 25;

    private enum Kind { JAVA, JDK_TOOL, OTHER }

    private final List<String> command;
    private final Kind kind;

    private ProgramLauncher(List<String> command, Kind kind) {
        this.command = command;
        this.kind = kind;
    }

    /** The program's command line as it will run, {@code err} told of a replaced launcher. */
    static ProgramLauncher of(List<String> command, PrintStream err) {
        return of(command, err, Path.of(System.getProperty("java.home")),
            System.getenv().getOrDefault("PATH", ""));
    }

    /** As {@link #of(List, PrintStream)}, with tern's own JDK at {@code ownHome} and {@code path} as PATH. */
    static ProgramLauncher of(List<String> command, PrintStream err, Path ownHome, String path) {
        final String first = command.getFirst();
        final boolean named = first.contains(File.separator);
        final Path launcher = named ? Path.of(first) : onPath(first, path);
        final Path home = launcher == null ? null : jdkHome(launcher);
        final String name = Path.of(first).getFileName().toString();
        final Kind kind = name.equals("java") ? Kind.JAVA : home != null ? Kind.JDK_TOOL : Kind.OTHER;
        if (kind == Kind.OTHER || home == null) {
            return new ProgramLauncher(command, kind);   // a java not found: starting it says so
        }
        final int version = javaVersion(home);
        if (version <= 0 || version >= MIN_JAVA) {
            return new ProgramLauncher(command, kind);
        }
        final Path own = ownHome.resolve("bin").resolve(name);
        final int ownVersion = Runtime.version().feature();
        if (named || !Files.isExecutable(own)) {
            throw new CommandFailure("exec: " + (named ? first : first + " on PATH (" + launcher + ")") + " is Java "
                + version + "; Tern needs " + MIN_JAVA + " or newer (this tern runs on Java " + ownVersion + ": "
                + own + ")");
        }
        err.println("tern: exec: " + name + " on PATH (" + launcher + ") is Java " + version + ", older than "
            + MIN_JAVA + "; running " + own + " (Java " + ownVersion + ") instead");
        final List<String> replaced = new ArrayList<>(command);
        replaced.set(0, own.toString());
        return new ProgramLauncher(List.copyOf(replaced), kind);
    }

    /** The command line with {@code ternOptions} where its launcher takes them; unchanged when only the variable can. */
    List<String> command(List<String> ternOptions) {
        final List<String> withOptions = new ArrayList<>(command);
        switch (kind) {
            case JAVA -> withOptions.addAll(1, ternOptions);
            case JDK_TOOL -> withOptions.addAll(1, ternOptions.stream().map(option -> "-J" + option).toList());
            case OTHER -> { }
        }
        return withOptions;
    }

    /** Whether Tern's options must go in JAVA_TOOL_OPTIONS (a launcher that is neither java nor a JDK tool). */
    boolean needsToolOptions() {
        return kind == Kind.OTHER;
    }

    private static Path onPath(String name, String path) {
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty()) {
                final Path candidate = Path.of(dir, name);
                if (Files.isExecutable(candidate) && !Files.isDirectory(candidate)) {
                    return candidate;
                }
            }
        }
        return null;
    }

    /**
     * The JDK home a launcher belongs to, its links followed: the folder above its {@code bin}, holding a {@code
     * release} file and a {@code bin/java}; null for anything else.
     */
    static Path jdkHome(Path launcher) {
        try {
            final Path bin = launcher.toRealPath().getParent();
            if (bin == null || bin.getFileName() == null || !bin.getFileName().toString().equals("bin")
                || bin.getParent() == null) {
                return null;
            }
            final Path home = bin.getParent();
            return Files.isRegularFile(home.resolve("release")) && Files.isExecutable(bin.resolve("java")) ? home : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** The feature release in a JDK home's {@code release} file ({@code JAVA_VERSION="17.0.15"}); 0 when unknown. */
    static int javaVersion(Path home) {
        try {
            for (String line : Files.readAllLines(home.resolve("release"))) {
                if (line.startsWith("JAVA_VERSION=")) {
                    final String value = line.substring("JAVA_VERSION=".length()).replace("\"", "");
                    final String feature = value.split("[.+-]")[0];
                    return Integer.parseInt(feature.equals("1") ? value.split("\\.")[1] : feature);
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }
}
