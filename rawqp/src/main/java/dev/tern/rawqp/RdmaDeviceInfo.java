package dev.tern.rawqp;

import java.util.List;

/**
 * What {@link RdmaDevices#list()} found about one RDMA device, for {@code tern devices}.
 *
 * @param name        the verbs device name ({@code mlx5_0}), what {@code --link rawqp:DEVICE} takes
 * @param ports       its ports, numbered from 1; empty when the device could not be opened
 * @param directVerbs libmlx5 drives it ({@code mlx5dv_is_supported}), so {@link RawQpOptions.Mode#DIRECT_VERBS} works
 * @param note        one line for a person: what works, what is missing
 */
public record RdmaDeviceInfo(String name, List<Port> ports, boolean directVerbs, String note) {
    public RdmaDeviceInfo {
        ports = List.copyOf(ports);
    }

    /**
     * One port.
     *
     * @param number    the port number ({@code --link rawqp:DEVICE:PORT})
     * @param linkLayer "Ethernet", "InfiniBand", ...
     * @param state     "ACTIVE", "DOWN", ... ({@code ibv_port_state})
     * @param activeMtu the port's active RDMA MTU in bytes (256..4096), not the Ethernet MTU of its netdev
     * @param rawPacket raw-packet QPs should work here: an Ethernet port on a device with raw-packet support
     *                  (mlx5, or one reporting managed flow steering). Creating one still needs CAP_NET_RAW.
     */
    public record Port(int number, String linkLayer, String state, int activeMtu, boolean rawPacket) {
        public boolean active() {
            return "ACTIVE".equals(state);
        }
    }

    public int portCount() {
        return ports.size();
    }

    /** The first port's link layer ("Ethernet", "InfiniBand"), or "unknown" without ports. */
    public String linkLayer() {
        return ports.isEmpty() ? "unknown" : ports.getFirst().linkLayer();
    }

    /** Some port can take a raw-packet QP. */
    public boolean rawPacketSupported() {
        return ports.stream().anyMatch(Port::rawPacket);
    }

    /** Some port is ACTIVE (link up). */
    public boolean anyPortActive() {
        return ports.stream().anyMatch(Port::active);
    }
}
