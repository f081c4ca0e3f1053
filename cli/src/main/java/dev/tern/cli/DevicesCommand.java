package dev.tern.cli;

import dev.tern.rawqp.RdmaDeviceInfo;
import dev.tern.rawqp.RdmaDevices;

import java.io.PrintStream;
import java.util.List;
import java.util.Set;

/**
 * {@code tern devices}: RDMA devices and whether they support raw-packet QPs (the {@code rawqp} link). Finding
 * none is a normal answer on most machines: exit 0 with the reason.
 */
final class DevicesCommand {
    static final CommandHelp HELP = new CommandHelp("devices", "", "RDMA devices and whether they support "
        + "raw-packet QPs", "Lists the RDMA devices of this machine, their ports, and whether each can carry "
            + "--link rawqp:DEVICE:PORT; no device is a normal answer (exit 0, with the reason). The rawqp link "
            + "is built and checked against rdma-core's headers but has never yet run on RDMA hardware.",
        List.of(), false, List.of("./tern devices"));

    /** Said wherever a user meets the link, so nobody mistakes a device listed here for a tested path. */
    static final String NEVER_RUN = "note: the rawqp link is built and checked against rdma-core's headers, "
        + "but has never yet run on RDMA hardware";

    private final PrintStream out;

    DevicesCommand(PrintStream out) {
        this.out = out;
    }

    int run(String[] argv) {
        Arguments.parse("devices", argv, Set.of(), Set.of()).operands(0, 0, "devices");
        final List<RdmaDeviceInfo> devices = RdmaDevices.list();
        if (devices.isEmpty()) {
            out.println(RdmaDevices.unavailableReason().orElse("no RDMA devices")
                + "; --link afpacket:IFACE and --link memory work on this machine");
            out.println(NEVER_RUN);
            return 0;
        }
        out.println(NEVER_RUN);
        for (RdmaDeviceInfo device : devices) {
            out.printf("%s: %s, direct verbs %s%s%n", device.name(), device.rawPacketSupported()
                ? "raw-packet QPs supported" : "no raw-packet QPs", device.directVerbs() ? "yes" : "no",
                device.note() == null || device.note().isEmpty() ? "" : " (" + device.note() + ")");
            for (RdmaDeviceInfo.Port port : device.ports()) {
                out.printf("  port %d: %s, %s, MTU %d%s -> --link rawqp:%s:%d%n", port.number(), port.linkLayer(),
                    port.state(), port.activeMtu(), port.rawPacket() ? "" : " (not usable: no raw packet)",
                    device.name(), port.number());
            }
        }
        return 0;
    }
}
