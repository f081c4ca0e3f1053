package dev.tern.cli;

import dev.tern.tcp.CongestionControlCatalog;
import dev.tern.tcp.TcpOptions;

import java.nio.file.Path;
import java.util.Set;

/**
 * The TCP flags {@code nc} and {@code serve} share: {@code --cc NAME} (the congestion control of every connection
 * the command opens or accepts) and {@code --tcp-trace FILE} (a CSV trace of each connection's sender, for
 * {@code tern plot}). The name is a built-in one, one a jar on the class path offers, or a class named in full
 * ({@link CongestionControlCatalog}); any other is one line naming the valid ones, or why the class cannot be used.
 */
record TcpCommandOptions(String congestionControl, Path trace) {
    static final String USAGE = "[--cc NAME] [--tcp-trace FILE]";
    static final Set<String> VALUE_FLAGS = Set.of("--cc", "--tcp-trace");

    static TcpCommandOptions from(String command, Arguments args) {
        final String cc = args.value("--cc", null);
        if (cc != null) {
            try {
                // Checked before the stack starts, so that a typo is a bad command line and not a failed connect.
                CongestionControlCatalog.ofContext().resolve(cc);
            } catch (IllegalArgumentException unusable) {
                throw new UsageException(command + ": " + unusable.getMessage());
            }
        }
        final String trace = args.value("--tcp-trace", null);
        return new TcpCommandOptions(cc, trace == null ? null : Path.of(trace));
    }

    /** {@code base} with the chosen congestion control, if any. */
    TcpOptions apply(TcpOptions base) {
        return congestionControl == null ? base : base.withCongestionControl(congestionControl);
    }

    /** The tracer for these options (one that does nothing without {@code --tcp-trace}). */
    ConnectionTraces traces(boolean perConnection) {
        return new ConnectionTraces(trace, perConnection);
    }
}
