package dev.tern.cli;

import java.io.PrintStream;
import java.util.Set;

/** {@code tern devices}: RDMA devices and whether they support raw-packet QPs. */
final class DevicesCommand {
    private final PrintStream out;

    DevicesCommand(PrintStream out) {
        this.out = out;
    }

    int run(String[] argv) {
        Arguments.parse("devices", argv, Set.of(), Set.of()).operands(0, 0, "devices");
        out.println("no RDMA devices: the rawqp link is not part of this build yet; --link afpacket:IFACE and --link memory work");
        return 0;
    }
}
