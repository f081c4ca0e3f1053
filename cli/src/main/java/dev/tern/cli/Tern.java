package dev.tern.cli;

import dev.tern.core.io.FileErrors;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.FileSystemException;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The {@code tern} command. Every failure the user can cause or fix (a bad flag, a missing device or privilege)
 * ends in one line in words on stderr and a non-zero exit status: 2 for a bad command line, 1 when the command could
 * not do its job ({@code ping}: 2, as ping(8)). No exception's class name or stack trace reaches the user; set
 * {@code TERN_DEBUG=1} to have the stack trace of an unexpected failure printed after its line.
 *
 * <p>{@code tern COMMAND --help}, {@code tern COMMAND -h} and {@code tern help COMMAND} print the command's
 * {@link CommandHelp} and exit 0; {@code tern help} and {@code tern --help} list the commands.
 */
public final class Tern {
    /** The help of {@code ./tern test}, which the launcher runs (Maven), not this class. */
    private static final CommandHelp TEST_HELP = new CommandHelp("test", "[MAVEN ARGUMENTS]",
        "install missing Debian packages (when root), run every test (mvn -B install)",
        "Installs the Debian packages the tests use when run as root and some are missing, then runs every test of "
            + "every module (mvn -B install, extra arguments passed on): each module is installed into the local Maven "
            + "repository before the modules above it are tested, so that the README's quick-start test builds against "
            + "them. Exits with Maven's status. Tests that need "
            + "root, network namespaces or a missing tool are skipped, or fail with TERN_REQUIRE_NETNS=1.",
        List.of(), false, List.of("./tern test", "./tern test -pl tcp -am"));

    /** Every command, in the order {@code tern help} lists them. */
    static final List<CommandHelp> COMMANDS = List.of(DemoCommand.HELP, TEST_HELP, PingCommand.HELP, NcCommand.HELP,
        ServeCommand.HELP, StatCommand.HELP, DevicesCommand.HELP, BenchCommand.HELP, PlotCommand.HELP, ScriptCommand.HELP,
        LabCommand.HELP, ExecCommand.HELP);

    private Tern() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || isHelp(args[0]) || args[0].equals("help") && args.length == 1) {
            out.print(CommandHelp.overview(COMMANDS));
            return args.length == 0 ? 2 : 0;
        }
        if (args[0].equals("help")) {
            return help(args[1], args.length > 2 ? args[2] : null, out, err);
        }
        final String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (asksForHelp(rest)) {
            return help(args[0], null, out, err);
        }
        try {
            final int status = switch (args[0]) {
                case "demo" -> new DemoCommand(out).run(rest);
                case "ping" -> new PingCommand(out, err).run(rest);
                case "nc" -> new NcCommand(System.in, out, err).run(rest);
                case "serve" -> new ServeCommand(out).run(rest);
                case "stat" -> new StatCommand(out).run(rest);
                case "devices" -> new DevicesCommand(out).run(rest);
                case "bench" -> new BenchCommand(out).run(rest);
                case "plot" -> new PlotCommand(out).run(rest);
                case "script" -> new ScriptCommand(out, err).run(rest);
                case "lab" -> new LabCommand(out, err).run(rest);
                case "exec" -> new ExecCommand(err).run(rest);
                case "test" -> throw new UsageException("test: run it through the launcher, ./tern test (it runs Maven)");
                default -> throw new UsageException("unknown command '" + args[0] + "' (./tern help lists them)");
            };
            out.flush();
            return status;
        } catch (UsageException e) {
            out.flush();
            err.println("tern: " + e.getMessage());
            return 2;
        } catch (CommandFailure | IllegalStateException | IllegalArgumentException | UncheckedIOException e) {
            out.flush();
            err.println("tern: " + describe(e));
            return failureStatus(args[0]);
        } catch (Exception e) {
            out.flush();
            err.println("tern: " + args[0] + " failed: " + describe(e));
            debug(e, err);
            return failureStatus(args[0]);
        }
    }

    /** ping(8) exits 2 on any error other than no reply; every other command 1. */
    private static int failureStatus(String command) {
        return command.equals("ping") ? 2 : 1;
    }

    private static boolean isHelp(String arg) {
        return arg.equals("--help") || arg.equals("-h");
    }

    /**
     * Whether the arguments after the command ask for its help: {@code --help} or {@code -h} anywhere before a
     * {@code --} (after it, they belong to the program {@code exec} runs).
     */
    static boolean asksForHelp(String[] rest) {
        for (String arg : rest) {
            if (arg.equals("--")) {
                return false;
            }
            if (isHelp(arg)) {
                return true;
            }
        }
        return false;
    }

    private static int help(String command, String extra, PrintStream out, PrintStream err) {
        if (extra != null) {
            err.println("tern: help: one command at a time; usage: ./tern help [COMMAND]");
            return 2;
        }
        for (CommandHelp help : COMMANDS) {
            if (help.name().equals(command)) {
                out.print(help.render());
                return 0;
            }
        }
        err.println("tern: help: unknown command '" + command + "' (./tern help lists them)");
        return 2;
    }

    /**
     * A failure in words: its message, or for exceptions whose message is only a file name, what happened to which
     * file; never the exception's class name.
     */
    static String describe(Throwable e) {
        if (e.getCause() != null && e.getCause() != e
            && (e.getMessage() == null || e.getMessage().equals(e.getCause().toString()))) {
            return describe(e.getCause()); // new UncheckedIOException(cause): its message is the cause's class and message
        }
        final String reason = e instanceof FileSystemException f && fileReason(f) != null
            ? file(f) + fileReason(f) : e.getMessage();
        if (reason != null && !reason.isBlank()) {
            final String line = reason.lines().findFirst().orElse(reason);
            return CLASS_NAME_PREFIX.matcher(line).replaceAll("");
        }
        return e instanceof IOException ? "input/output error"
            : "an internal error with no message (a bug: please report it; TERN_DEBUG=1 prints where it happened)";
    }

    /** {@code java.io.IOException: } inside a message built from another exception's toString(). */
    private static final Pattern CLASS_NAME_PREFIX =
        Pattern.compile("\\b(?:[a-z_][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_$]*(?:Exception|Error): ");

    /**
     * Why a file operation failed, in words, without the file's name (for a message that names it already); for
     * other failures, {@link #describe}.
     */
    static String reason(Throwable e) {
        return e instanceof FileSystemException f && fileReason(f) != null ? fileReason(f) : describe(e);
    }

    /** For these exceptions the message is only the file's name; the reason is in the class or in getReason(). */
    private static String fileReason(FileSystemException e) {
        return FileErrors.reason(e);
    }

    private static String file(FileSystemException e) {
        return e.getFile() == null ? "" : e.getFile() + ": ";
    }

    /** With {@code TERN_DEBUG=1}, the stack trace of an unexpected failure, for a bug report. */
    private static void debug(Exception e, PrintStream err) {
        if ("1".equals(System.getenv("TERN_DEBUG"))) {
            e.printStackTrace(err);
        }
    }
}
