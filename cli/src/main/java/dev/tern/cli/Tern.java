package dev.tern.cli;

import java.io.PrintStream;
import java.util.Arrays;

/**
 * The {@code tern} command. Every failure the user can cause or fix (a bad flag, a missing device or privilege)
 * ends in one line on stderr and a non-zero exit status: 2 for a bad command line, 1 when the command could not do
 * its job.
 */
public final class Tern {
    private static final String HELP = """
        usage: ./tern COMMAND [OPTIONS]
          demo                      two stacks over the memory wire; exit 0 only if every step passed
                                    %s
          test                      install missing system packages (when root), run every test
          ping                      %s
          nc                        %s
          serve                     %s
          stat                      %s
          devices                   RDMA devices and whether they support raw-packet QPs
          bench                     %s
          plot                      draw a TCP connection trace (CSV) as a chart: %s
          exec                      %s
                                    run an unmodified JVM program on Tern (NIO through Tern's provider)
        link flags: %s
        """;

    private Tern() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h")) {
            out.print(help());
            return args.length == 0 ? 2 : 0;
        }
        final String[] rest = Arrays.copyOfRange(args, 1, args.length);
        try {
            final int status = switch (args[0]) {
                case "demo" -> new DemoCommand(out).run(rest);
                case "ping" -> new PingCommand(out).run(rest);
                case "nc" -> new NcCommand(System.in, out, err).run(rest);
                case "serve" -> new ServeCommand(out).run(rest);
                case "stat" -> new StatCommand(out).run(rest);
                case "devices" -> new DevicesCommand(out).run(rest);
                case "bench" -> new BenchCommand(out).run(rest);
                case "plot" -> new PlotCommand(out).run(rest);
                case "exec" -> new ExecCommand(err).run(rest);
                default -> throw new UsageException("unknown command '" + args[0] + "' (try ./tern help)");
            };
            out.flush();
            return status;
        } catch (UsageException e) {
            out.flush();
            err.println("tern: " + e.getMessage());
            return 2;
        } catch (CommandFailure | IllegalStateException | IllegalArgumentException e) {
            out.flush();
            err.println("tern: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            out.flush();
            err.println("tern: " + args[0] + " failed: " + e);
            return 1;
        }
    }

    static String help() {
        return HELP.formatted(DemoCommand.USAGE, PingCommand.USAGE, NcCommand.USAGE, ServeCommand.USAGE, StatCommand.USAGE,
            BenchCommand.USAGE, PlotCommand.USAGE, ExecCommand.USAGE, NetworkOptions.USAGE);
    }
}
