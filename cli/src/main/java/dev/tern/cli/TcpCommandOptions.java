package dev.tern.cli;

import dev.tern.tcp.TcpLayer;
import dev.tern.tcp.TcpOptions;

import java.nio.file.Path;
import java.util.Set;

/**
 * The TCP flags {@code nc} and {@code serve} share: {@code --cc NAME} (the congestion control of every connection
 * the command opens or accepts) and {@code --tcp-trace FILE} (a CSV trace of each connection's sender, for
 * {@code tern plot}). An unknown name is one line naming the valid ones.
 */
record TcpCommandOptions(String congestionControl, Path trace) {
    static final String USAGE = "[--cc NAME] [--tcp-trace FILE]";
    static final Set<String> VALUE_FLAGS = Set.of("--cc", "--tcp-trace");

    static TcpCommandOptions from(String command, Arguments args) {
        final String cc = args.value("--cc", null);
        if (cc != null && !TcpLayer.BUILT_IN_CONGESTION_CONTROLS.contains(cc)) {
            throw new UsageException(command + ": unknown congestion control '" + cc + "' (valid: "
                + String.join(", ", TcpLayer.BUILT_IN_CONGESTION_CONTROLS) + ")");
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
