package dev.tern.nio.agent;

import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.jar.JarFile;

/**
 * The Java agent behind {@code tern exec}: loaded with {@code -javaagent:tern-nio.jar=CONFIG} (which
 * {@code tern exec} puts in {@code JAVA_TOOL_OPTIONS}, so that any JVM the command starts picks it up: {@code java},
 * a JDK tool, a launcher script), it makes Tern's provider the JVM's {@code SelectorProvider} before the program's
 * {@code main} runs, without touching the program's class path or command line.
 *
 * <p>CONFIG is a properties file {@code tern exec} wrote: {@code tern.classpath} (Tern's jars and Agrona, separated
 * by the path separator), and the provider's {@code tern.*} settings ({@code tern.link}, {@code tern.ip}, {@code tern.rules}, ...). The agent
 * <ol>
 *   <li>appends Tern's jars (and Agrona) to the system class path;
 *   <li>exports {@code jdk.internal.misc} (Agrona) and {@code sun.nio.ch} (the JDK's own provider, which serves the
 *       kernel's channels) to the class path's module, as {@code --add-exports} would;
 *   <li>copies the {@code tern.*} settings into system properties, unless the program's command line set them;
 *   <li>checks the link settings and the rules now, so that a malformed rules file is one line with the file, line
 *       and reason, and exit status 2, before the program starts;
 *   <li>sets {@code java.nio.channels.spi.SelectorProvider} to {@code dev.tern.nio.TernSelectorProvider}.
 * </ol>
 * This class touches only the JDK until the jars are on the class path.
 */
public final class TernAgent {
    private static final String PROVIDER = "dev.tern.nio.TernSelectorProvider";

    private TernAgent() {
    }

    public static void premain(String arguments, Instrumentation instrumentation) {
        try {
            final Properties config = load(arguments);
            final String classpath = config.getProperty("tern.classpath", "");
            for (String jar : classpath.split(java.io.File.pathSeparator)) {
                if (!jar.isEmpty()) {
                    instrumentation.appendToSystemClassLoaderSearch(new JarFile(jar));
                }
            }
            final Module unnamed = ClassLoader.getSystemClassLoader().getUnnamedModule();
            instrumentation.redefineModule(Object.class.getModule(), Set.of(),
                Map.of("jdk.internal.misc", Set.of(unnamed), "sun.nio.ch", Set.of(unnamed)), Map.of(), Set.of(), Map.of());
            for (String name : config.stringPropertyNames()) {
                if (name.startsWith("tern.") && !name.equals("tern.classpath") && System.getProperty(name) == null) {
                    System.setProperty(name, config.getProperty(name));
                }
            }
            Class.forName(PROVIDER).getMethod("checkConfiguration", Properties.class).invoke(null, System.getProperties());
            if (System.getProperty("java.nio.channels.spi.SelectorProvider") == null) {
                System.setProperty("java.nio.channels.spi.SelectorProvider", PROVIDER);
            }
            Class.forName("dev.tern.nio.agent.ClassicSockets").getMethod("install").invoke(null);
        } catch (InvocationTargetException e) {
            fail(e.getCause() instanceof IllegalArgumentException bad ? bad.getMessage()
                : "cannot start Tern's provider: " + inWords(e.getCause()));
        } catch (IOException | ReflectiveOperationException | RuntimeException e) {
            fail("cannot start Tern's provider: " + inWords(e));
        }
    }

    /** A failure's message for the one line the user sees: never the exception's class name. */
    private static String inWords(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()
                && (t.getCause() == null || !t.getMessage().equals(t.getCause().toString()))) {
                return t.getMessage().lines().findFirst().orElse("");
            }
        }
        return "an internal error with no message (a bug: please report it)";
    }

    private static void fail(String line) {
        System.err.println("tern exec: " + line);
        System.err.flush();
        Runtime.getRuntime().halt(2);
    }

    private static Properties load(String arguments) throws IOException {
        final Properties config = new Properties();
        if (arguments != null && !arguments.isBlank()) {
            try (InputStream in = Files.newInputStream(Path.of(arguments))) {
                config.load(in);
            }
        }
        return config;
    }

}
