package dev.tern.rawqp.ffm;

/**
 * The libibverbs enum and flag values the bindings pass or compare, each checked against verbs.h by
 * {@code AbiTest} through its {@link CAbi} name. Names keep the C spelling so they can be searched in the header.
 */
public final class VerbsConstants {
    @CAbi("IBV_QPT_RAW_PACKET")
    public static final int IBV_QPT_RAW_PACKET = 8;

    @CAbi("IBV_QPS_RESET")
    public static final int IBV_QPS_RESET = 0;
    @CAbi("IBV_QPS_INIT")
    public static final int IBV_QPS_INIT = 1;
    @CAbi("IBV_QPS_RTR")
    public static final int IBV_QPS_RTR = 2;
    @CAbi("IBV_QPS_RTS")
    public static final int IBV_QPS_RTS = 3;
    @CAbi("IBV_QPS_ERR")
    public static final int IBV_QPS_ERR = 6;

    @CAbi("IBV_QP_STATE")
    public static final int IBV_QP_STATE = 1;
    @CAbi("IBV_QP_PORT")
    public static final int IBV_QP_PORT = 0x20;

    @CAbi("IBV_ACCESS_LOCAL_WRITE")
    public static final int IBV_ACCESS_LOCAL_WRITE = 1;

    @CAbi("IBV_WR_SEND")
    public static final int IBV_WR_SEND = 2;
    @CAbi("IBV_SEND_SIGNALED")
    public static final int IBV_SEND_SIGNALED = 2;
    @CAbi("IBV_SEND_INLINE")
    public static final int IBV_SEND_INLINE = 8;
    @CAbi("IBV_SEND_IP_CSUM")
    public static final int IBV_SEND_IP_CSUM = 0x10;

    @CAbi("IBV_WC_SUCCESS")
    public static final int IBV_WC_SUCCESS = 0;
    @CAbi("IBV_WC_WR_FLUSH_ERR")
    public static final int IBV_WC_WR_FLUSH_ERR = 5;
    @CAbi("IBV_WC_SEND")
    public static final int IBV_WC_SEND = 0;
    @CAbi("IBV_WC_RECV")
    public static final int IBV_WC_RECV = 0x80;
    @CAbi("IBV_WC_IP_CSUM_OK")
    public static final int IBV_WC_IP_CSUM_OK = 4;

    @CAbi("IBV_LINK_LAYER_UNSPECIFIED")
    public static final int IBV_LINK_LAYER_UNSPECIFIED = 0;
    @CAbi("IBV_LINK_LAYER_INFINIBAND")
    public static final int IBV_LINK_LAYER_INFINIBAND = 1;
    @CAbi("IBV_LINK_LAYER_ETHERNET")
    public static final int IBV_LINK_LAYER_ETHERNET = 2;

    @CAbi("IBV_PORT_NOP")
    public static final int IBV_PORT_NOP = 0;
    @CAbi("IBV_PORT_DOWN")
    public static final int IBV_PORT_DOWN = 1;
    @CAbi("IBV_PORT_INIT")
    public static final int IBV_PORT_INIT = 2;
    @CAbi("IBV_PORT_ARMED")
    public static final int IBV_PORT_ARMED = 3;
    @CAbi("IBV_PORT_ACTIVE")
    public static final int IBV_PORT_ACTIVE = 4;
    @CAbi("IBV_PORT_ACTIVE_DEFER")
    public static final int IBV_PORT_ACTIVE_DEFER = 5;

    /** {@code enum ibv_mtu}: 1..5 stand for 256..4096 bytes. */
    @CAbi("IBV_MTU_256")
    public static final int IBV_MTU_256 = 1;
    @CAbi("IBV_MTU_4096")
    public static final int IBV_MTU_4096 = 5;

    @CAbi("IBV_DEVICE_RAW_IP_CSUM")
    public static final int IBV_DEVICE_RAW_IP_CSUM = 0x0400_0000;
    @CAbi("IBV_DEVICE_MANAGED_FLOW_STEERING")
    public static final int IBV_DEVICE_MANAGED_FLOW_STEERING = 0x2000_0000;
    @CAbi("IBV_RAW_PACKET_CAP_IP_CSUM")
    public static final int IBV_RAW_PACKET_CAP_IP_CSUM = 4;

    @CAbi("IBV_QP_INIT_ATTR_PD")
    public static final int IBV_QP_INIT_ATTR_PD = 1;
    @CAbi("IBV_QP_INIT_ATTR_MAX_TSO_HEADER")
    public static final int IBV_QP_INIT_ATTR_MAX_TSO_HEADER = 8;

    @CAbi("IBV_FLOW_ATTR_NORMAL")
    public static final int IBV_FLOW_ATTR_NORMAL = 0;
    @CAbi("IBV_FLOW_SPEC_ETH")
    public static final int IBV_FLOW_SPEC_ETH = 0x20;
    @CAbi("IBV_FLOW_SPEC_IPV4")
    public static final int IBV_FLOW_SPEC_IPV4 = 0x30;
    @CAbi("IBV_FLOW_SPEC_IPV6")
    public static final int IBV_FLOW_SPEC_IPV6 = 0x31;
    /** {@code ibv_flow_attr.flags}: a matching packet also goes on to lower-priority rules and the kernel. */
    @CAbi("IBV_FLOW_ATTR_FLAGS_DONT_TRAP")
    public static final int IBV_FLOW_ATTR_FLAGS_DONT_TRAP = 1 << 1;
    @CAbi("IBV_FLOW_SPEC_TCP")
    public static final int IBV_FLOW_SPEC_TCP = 0x40;
    @CAbi("IBV_FLOW_SPEC_UDP")
    public static final int IBV_FLOW_SPEC_UDP = 0x41;

    private VerbsConstants() {
    }

    /** Bytes of an {@code enum ibv_mtu} value (1 → 256 ... 5 → 4096), or 0 for anything else. */
    public static int mtuBytes(int ibvMtu) {
        return ibvMtu >= IBV_MTU_256 && ibvMtu <= IBV_MTU_4096 ? 128 << ibvMtu : 0;
    }

    /** {@code ibv_port_state_str} without the call: the port state as the kernel's sysfs spells it. */
    public static String portStateName(int state) {
        return switch (state) {
            case IBV_PORT_NOP -> "NOP";
            case IBV_PORT_DOWN -> "DOWN";
            case IBV_PORT_INIT -> "INIT";
            case IBV_PORT_ARMED -> "ARMED";
            case IBV_PORT_ACTIVE -> "ACTIVE";
            case IBV_PORT_ACTIVE_DEFER -> "ACTIVE_DEFER";
            default -> "state " + state;
        };
    }

    public static String linkLayerName(int linkLayer) {
        return switch (linkLayer) {
            case IBV_LINK_LAYER_ETHERNET -> "Ethernet";
            case IBV_LINK_LAYER_INFINIBAND -> "InfiniBand";
            case IBV_LINK_LAYER_UNSPECIFIED -> "unspecified";
            default -> "link layer " + linkLayer;
        };
    }
}
