package dev.tern.rawqp.ffm;

/**
 * Offsets and sizes of the libibverbs structs the bindings read or write (x86_64, rdma-core 44 headers), one
 * nested class per C struct.
 *
 * <p>The values were printed by gcc ({@code offsetof}/{@code sizeof}); each carries the expression in {@link CAbi}
 * and {@code AbiTest} recompiles all of them against the installed {@code <infiniband/verbs.h>} on every build.
 * Only fields the bindings read, write or deliberately zero are listed: this is not a general-purpose mapping of
 * verbs.h.
 *
 * <p>Nested struct members use gcc's {@code offsetof(struct s, a.b)} form, so an offset is always from the start
 * of the outer struct the code holds a pointer to.
 */
public final class VerbsLayouts {
    private VerbsLayouts() {
    }

    /**
     * {@code struct ibv_context}: the device context. Its {@code ops} table holds the provider's data-path functions
     * that verbs.h calls from static inlines ({@code ibv_post_send} is {@code qp->context->ops.post_send(...)}).
     *
     * <pre>
     *   0        8                                              264       320          328
     *   +--------+----------------- ops (256) ------------------+--- ... ---+------------+
     *   | device | ... poll_cq@96 ... post_send@208 post_recv@216| cmd_fd .. | abi_compat |
     *   +--------+-----------------------------------------------+-----------+------------+
     * </pre>
     */
    public static final class IbvContext {
        @CAbi("sizeof(struct ibv_context)")
        public static final int SIZE = 328;
        @CAbi(value = "offsetof(struct ibv_context, ops.poll_cq)", width = 8)
        public static final int OPS_POLL_CQ_OFFSET = 96;
        @CAbi(value = "offsetof(struct ibv_context, ops.post_send)", width = 8)
        public static final int OPS_POST_SEND_OFFSET = 208;
        @CAbi(value = "offsetof(struct ibv_context, ops.post_recv)", width = 8)
        public static final int OPS_POST_RECV_OFFSET = 216;
        @CAbi(value = "offsetof(struct ibv_context, abi_compat)", width = 8)
        public static final int ABI_COMPAT_OFFSET = 320;

        private IbvContext() {
        }
    }

    /**
     * {@code struct verbs_context}: the extended context that sits in memory <em>before</em> the
     * {@code struct ibv_context} a caller holds (it is the last member). verbs.h reaches it with
     * {@code (char *) ctx - offsetof(struct verbs_context, context)} and uses an op only if {@code abi_compat} is
     * {@link #ABI_IS_EXTENDED}, {@code sz >= SIZE - op offset}, and the pointer is not NULL ({@code verbs_get_ctx_op}).
     *
     * <pre>
     *   vctx = ctx - 320
     *   0 ...  query_device_ex@216  ibv_destroy_flow@224  ibv_create_flow@240 ... sz@312 | context@320 (ibv_context, 328)
     * </pre>
     */
    public static final class VerbsContext {
        @CAbi("sizeof(struct verbs_context)")
        public static final int SIZE = 648;
        @CAbi("offsetof(struct verbs_context, context)")
        public static final int CONTEXT_OFFSET = 320;
        @CAbi(value = "offsetof(struct verbs_context, sz)", width = 8)
        public static final int SZ_OFFSET = 312;
        @CAbi(value = "offsetof(struct verbs_context, query_device_ex)", width = 8)
        public static final int QUERY_DEVICE_EX_OFFSET = 216;
        @CAbi(value = "offsetof(struct verbs_context, ibv_destroy_flow)", width = 8)
        public static final int IBV_DESTROY_FLOW_OFFSET = 224;
        @CAbi(value = "offsetof(struct verbs_context, ibv_create_flow)", width = 8)
        public static final int IBV_CREATE_FLOW_OFFSET = 240;
        /** {@code __VERBS_ABI_IS_EXTENDED}, {@code (void *) UINTPTR_MAX}: the value of {@code abi_compat} in an extended context. */
        @CAbi("(uintptr_t) __VERBS_ABI_IS_EXTENDED")
        public static final long ABI_IS_EXTENDED = -1L;

        private VerbsContext() {
        }
    }

    /** {@code struct ibv_port_attr} (52 bytes, align 4), filled by {@code ibv_query_port}. */
    public static final class IbvPortAttr {
        @CAbi("sizeof(struct ibv_port_attr)")
        public static final int SIZE = 52;
        @CAbi(value = "offsetof(struct ibv_port_attr, state)", width = 4)
        public static final int STATE_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_port_attr, max_mtu)", width = 4)
        public static final int MAX_MTU_OFFSET = 4;
        @CAbi(value = "offsetof(struct ibv_port_attr, active_mtu)", width = 4)
        public static final int ACTIVE_MTU_OFFSET = 8;
        @CAbi(value = "offsetof(struct ibv_port_attr, link_layer)", width = 1)
        public static final int LINK_LAYER_OFFSET = 46;

        private IbvPortAttr() {
        }
    }

    /** {@code struct ibv_device_attr} (232 bytes), filled by the exported {@code ibv_query_device}. */
    public static final class IbvDeviceAttr {
        @CAbi("sizeof(struct ibv_device_attr)")
        public static final int SIZE = 232;
        @CAbi(value = "offsetof(struct ibv_device_attr, max_qp_wr)", width = 4)
        public static final int MAX_QP_WR_OFFSET = 112;
        @CAbi(value = "offsetof(struct ibv_device_attr, device_cap_flags)", width = 4)
        public static final int DEVICE_CAP_FLAGS_OFFSET = 116;
        @CAbi(value = "offsetof(struct ibv_device_attr, max_cqe)", width = 4)
        public static final int MAX_CQE_OFFSET = 132;
        @CAbi(value = "offsetof(struct ibv_device_attr, phys_port_cnt)", width = 1)
        public static final int PHYS_PORT_CNT_OFFSET = 227;

        private IbvDeviceAttr() {
        }
    }

    /** {@code struct ibv_query_device_ex_input}, the first argument of {@code query_device_ex}. */
    public static final class IbvQueryDeviceExInput {
        @CAbi("sizeof(struct ibv_query_device_ex_input)")
        public static final int SIZE = 4;
        @CAbi(value = "offsetof(struct ibv_query_device_ex_input, comp_mask)", width = 4)
        public static final int COMP_MASK_OFFSET = 0;

        private IbvQueryDeviceExInput() {
        }
    }

    /** {@code struct ibv_device_attr_ex} (400 bytes), filled by the inline-only {@code ibv_query_device_ex}. */
    public static final class IbvDeviceAttrEx {
        @CAbi("sizeof(struct ibv_device_attr_ex)")
        public static final int SIZE = 400;
        @CAbi(value = "offsetof(struct ibv_device_attr_ex, tso_caps.max_tso)", width = 4)
        public static final int TSO_CAPS_MAX_TSO_OFFSET = 288;
        @CAbi(value = "offsetof(struct ibv_device_attr_ex, tso_caps.supported_qpts)", width = 4)
        public static final int TSO_CAPS_SUPPORTED_QPTS_OFFSET = 292;
        @CAbi(value = "offsetof(struct ibv_device_attr_ex, raw_packet_caps)", width = 4)
        public static final int RAW_PACKET_CAPS_OFFSET = 344;

        private IbvDeviceAttrEx() {
        }
    }

    /** {@code struct ibv_mr}: the registered memory region; we read only its local key. */
    public static final class IbvMr {
        @CAbi("sizeof(struct ibv_mr)")
        public static final int SIZE = 48;
        @CAbi(value = "offsetof(struct ibv_mr, lkey)", width = 4)
        public static final int LKEY_OFFSET = 36;

        private IbvMr() {
        }
    }

    /** {@code struct ibv_cq}. {@code context} is how verbs.h's {@code ibv_poll_cq} finds the ops table. */
    public static final class IbvCq {
        @CAbi("sizeof(struct ibv_cq)")
        public static final int SIZE = 128;
        @CAbi(value = "offsetof(struct ibv_cq, context)", width = 8)
        public static final int CONTEXT_OFFSET = 0;

        private IbvCq() {
        }
    }

    /** {@code struct ibv_qp}. {@code context} is how {@code ibv_post_send}/{@code ibv_post_recv} find the ops table. */
    public static final class IbvQp {
        @CAbi("sizeof(struct ibv_qp)")
        public static final int SIZE = 160;
        @CAbi(value = "offsetof(struct ibv_qp, context)", width = 8)
        public static final int CONTEXT_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_qp, qp_num)", width = 4)
        public static final int QP_NUM_OFFSET = 52;

        private IbvQp() {
        }
    }

    /**
     * {@code struct ibv_qp_init_attr} (64 bytes) for {@code ibv_create_qp}. {@code cap} is an embedded
     * {@code struct ibv_qp_cap} that the provider overwrites with the sizes it really allocated.
     */
    public static final class IbvQpInitAttr {
        @CAbi("sizeof(struct ibv_qp_init_attr)")
        public static final int SIZE = 64;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr, send_cq)", width = 8)
        public static final int SEND_CQ_OFFSET = 8;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr, recv_cq)", width = 8)
        public static final int RECV_CQ_OFFSET = 16;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr, cap.max_send_wr)", width = 4)
        public static final int CAP_MAX_SEND_WR_OFFSET = 32;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr, cap.max_recv_wr)", width = 4)
        public static final int CAP_MAX_RECV_WR_OFFSET = 36;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr, cap.max_send_sge)", width = 4)
        public static final int CAP_MAX_SEND_SGE_OFFSET = 40;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr, cap.max_recv_sge)", width = 4)
        public static final int CAP_MAX_RECV_SGE_OFFSET = 44;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr, cap.max_inline_data)", width = 4)
        public static final int CAP_MAX_INLINE_DATA_OFFSET = 48;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr, qp_type)", width = 4)
        public static final int QP_TYPE_OFFSET = 52;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr, sq_sig_all)", width = 4)
        public static final int SQ_SIG_ALL_OFFSET = 56;

        private IbvQpInitAttr() {
        }
    }

    /**
     * {@code struct ibv_qp_init_attr_ex} (136 bytes) for {@code mlx5dv_create_qp}: the first 60 bytes match
     * {@link IbvQpInitAttr}, then the extension fields selected by {@code comp_mask}.
     */
    public static final class IbvQpInitAttrEx {
        @CAbi("sizeof(struct ibv_qp_init_attr_ex)")
        public static final int SIZE = 136;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, send_cq)", width = 8)
        public static final int SEND_CQ_OFFSET = 8;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, recv_cq)", width = 8)
        public static final int RECV_CQ_OFFSET = 16;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, cap.max_send_wr)", width = 4)
        public static final int CAP_MAX_SEND_WR_OFFSET = 32;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, cap.max_recv_wr)", width = 4)
        public static final int CAP_MAX_RECV_WR_OFFSET = 36;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, cap.max_send_sge)", width = 4)
        public static final int CAP_MAX_SEND_SGE_OFFSET = 40;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, cap.max_recv_sge)", width = 4)
        public static final int CAP_MAX_RECV_SGE_OFFSET = 44;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, cap.max_inline_data)", width = 4)
        public static final int CAP_MAX_INLINE_DATA_OFFSET = 48;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, qp_type)", width = 4)
        public static final int QP_TYPE_OFFSET = 52;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, sq_sig_all)", width = 4)
        public static final int SQ_SIG_ALL_OFFSET = 56;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, comp_mask)", width = 4)
        public static final int COMP_MASK_OFFSET = 60;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, pd)", width = 8)
        public static final int PD_OFFSET = 64;
        @CAbi(value = "offsetof(struct ibv_qp_init_attr_ex, max_tso_header)", width = 2)
        public static final int MAX_TSO_HEADER_OFFSET = 84;

        private IbvQpInitAttrEx() {
        }
    }

    /** {@code struct ibv_qp_attr} (144 bytes) for {@code ibv_modify_qp}; a raw-packet QP needs only state and port. */
    public static final class IbvQpAttr {
        @CAbi("sizeof(struct ibv_qp_attr)")
        public static final int SIZE = 144;
        @CAbi(value = "offsetof(struct ibv_qp_attr, qp_state)", width = 4)
        public static final int QP_STATE_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_qp_attr, port_num)", width = 1)
        public static final int PORT_NUM_OFFSET = 129;

        private IbvQpAttr() {
        }
    }

    /** {@code struct ibv_sge}: one gather/scatter element (16 bytes, host byte order). */
    public static final class IbvSge {
        @CAbi("sizeof(struct ibv_sge)")
        public static final int SIZE = 16;
        @CAbi(value = "offsetof(struct ibv_sge, addr)", width = 8)
        public static final int ADDR_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_sge, length)", width = 4)
        public static final int LENGTH_OFFSET = 8;
        @CAbi(value = "offsetof(struct ibv_sge, lkey)", width = 4)
        public static final int LKEY_OFFSET = 12;

        private IbvSge() {
        }
    }

    /** {@code struct ibv_send_wr} (128 bytes); the RDMA/UD/TSO unions are left zero for a raw-packet SEND. */
    public static final class IbvSendWr {
        @CAbi("sizeof(struct ibv_send_wr)")
        public static final int SIZE = 128;
        @CAbi(value = "offsetof(struct ibv_send_wr, wr_id)", width = 8)
        public static final int WR_ID_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_send_wr, next)", width = 8)
        public static final int NEXT_OFFSET = 8;
        @CAbi(value = "offsetof(struct ibv_send_wr, sg_list)", width = 8)
        public static final int SG_LIST_OFFSET = 16;
        @CAbi(value = "offsetof(struct ibv_send_wr, num_sge)", width = 4)
        public static final int NUM_SGE_OFFSET = 24;
        @CAbi(value = "offsetof(struct ibv_send_wr, opcode)", width = 4)
        public static final int OPCODE_OFFSET = 28;
        @CAbi(value = "offsetof(struct ibv_send_wr, send_flags)", width = 4)
        public static final int SEND_FLAGS_OFFSET = 32;

        private IbvSendWr() {
        }
    }

    /** {@code struct ibv_recv_wr} (32 bytes). */
    public static final class IbvRecvWr {
        @CAbi("sizeof(struct ibv_recv_wr)")
        public static final int SIZE = 32;
        @CAbi(value = "offsetof(struct ibv_recv_wr, wr_id)", width = 8)
        public static final int WR_ID_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_recv_wr, next)", width = 8)
        public static final int NEXT_OFFSET = 8;
        @CAbi(value = "offsetof(struct ibv_recv_wr, sg_list)", width = 8)
        public static final int SG_LIST_OFFSET = 16;
        @CAbi(value = "offsetof(struct ibv_recv_wr, num_sge)", width = 4)
        public static final int NUM_SGE_OFFSET = 24;

        private IbvRecvWr() {
        }
    }

    /** {@code struct ibv_wc} (48 bytes): one work completion written by {@code poll_cq}. */
    public static final class IbvWc {
        @CAbi("sizeof(struct ibv_wc)")
        public static final int SIZE = 48;
        @CAbi(value = "offsetof(struct ibv_wc, wr_id)", width = 8)
        public static final int WR_ID_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_wc, status)", width = 4)
        public static final int STATUS_OFFSET = 8;
        @CAbi(value = "offsetof(struct ibv_wc, opcode)", width = 4)
        public static final int OPCODE_OFFSET = 12;
        @CAbi(value = "offsetof(struct ibv_wc, byte_len)", width = 4)
        public static final int BYTE_LEN_OFFSET = 20;
        @CAbi(value = "offsetof(struct ibv_wc, wc_flags)", width = 4)
        public static final int WC_FLAGS_OFFSET = 36;

        private IbvWc() {
        }
    }

    /**
     * {@code struct ibv_flow_attr} (20 bytes, align 4), followed directly by its specs; {@code size} counts the
     * attribute and every spec.
     */
    public static final class IbvFlowAttr {
        @CAbi("sizeof(struct ibv_flow_attr)")
        public static final int SIZE = 20;
        @CAbi(value = "offsetof(struct ibv_flow_attr, comp_mask)", width = 4)
        public static final int COMP_MASK_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_flow_attr, type)", width = 4)
        public static final int TYPE_OFFSET = 4;
        @CAbi(value = "offsetof(struct ibv_flow_attr, size)", width = 2)
        public static final int SIZE_OFFSET = 8;
        @CAbi(value = "offsetof(struct ibv_flow_attr, priority)", width = 2)
        public static final int PRIORITY_OFFSET = 10;
        @CAbi(value = "offsetof(struct ibv_flow_attr, num_of_specs)", width = 1)
        public static final int NUM_OF_SPECS_OFFSET = 12;
        @CAbi(value = "offsetof(struct ibv_flow_attr, port)", width = 1)
        public static final int PORT_OFFSET = 13;
        @CAbi(value = "offsetof(struct ibv_flow_attr, flags)", width = 4)
        public static final int FLAGS_OFFSET = 16;

        private IbvFlowAttr() {
        }
    }

    /**
     * {@code struct ibv_flow_spec_eth} (40 bytes): {@code val} and {@code mask} are {@code struct ibv_flow_eth_filter}
     * (16 bytes, align 2), so {@code val} starts at 6, right after the 16-bit {@code size}.
     * Filter fields are in network byte order.
     */
    public static final class IbvFlowSpecEth {
        @CAbi("sizeof(struct ibv_flow_spec_eth)")
        public static final int SIZE = 40;
        @CAbi(value = "offsetof(struct ibv_flow_spec_eth, type)", width = 4)
        public static final int TYPE_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_flow_spec_eth, size)", width = 2)
        public static final int SIZE_OFFSET = 4;
        @CAbi("offsetof(struct ibv_flow_spec_eth, val)")
        public static final int VAL_OFFSET = 6;
        @CAbi("offsetof(struct ibv_flow_spec_eth, mask)")
        public static final int MASK_OFFSET = 22;
        @CAbi(value = "offsetof(struct ibv_flow_eth_filter, dst_mac)", width = 6)
        public static final int FILTER_DST_MAC_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_flow_eth_filter, src_mac)", width = 6)
        public static final int FILTER_SRC_MAC_OFFSET = 6;
        @CAbi(value = "offsetof(struct ibv_flow_eth_filter, ether_type)", width = 2)
        public static final int FILTER_ETHER_TYPE_OFFSET = 12;
        @CAbi(value = "offsetof(struct ibv_flow_eth_filter, vlan_tag)", width = 2)
        public static final int FILTER_VLAN_TAG_OFFSET = 14;
        @CAbi("sizeof(struct ibv_flow_eth_filter)")
        public static final int FILTER_SIZE = 16;

        private IbvFlowSpecEth() {
        }
    }

    /** {@code struct ibv_flow_spec_ipv4} (24 bytes); addresses in network byte order. */
    public static final class IbvFlowSpecIpv4 {
        @CAbi("sizeof(struct ibv_flow_spec_ipv4)")
        public static final int SIZE = 24;
        @CAbi(value = "offsetof(struct ibv_flow_spec_ipv4, type)", width = 4)
        public static final int TYPE_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_flow_spec_ipv4, size)", width = 2)
        public static final int SIZE_OFFSET = 4;
        @CAbi("offsetof(struct ibv_flow_spec_ipv4, val)")
        public static final int VAL_OFFSET = 8;
        @CAbi("offsetof(struct ibv_flow_spec_ipv4, mask)")
        public static final int MASK_OFFSET = 16;
        @CAbi(value = "offsetof(struct ibv_flow_ipv4_filter, src_ip)", width = 4)
        public static final int FILTER_SRC_IP_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_flow_ipv4_filter, dst_ip)", width = 4)
        public static final int FILTER_DST_IP_OFFSET = 4;
        @CAbi("sizeof(struct ibv_flow_ipv4_filter)")
        public static final int FILTER_SIZE = 8;

        private IbvFlowSpecIpv4() {
        }
    }

    /**
     * {@code struct ibv_flow_spec_ipv6} (88 bytes): {@code val} and {@code mask} are {@code struct
     * ibv_flow_ipv6_filter} (40 bytes: the addresses, the flow label, next header, traffic class and hop limit, then
     * padding to 4); addresses in network byte order.
     */
    public static final class IbvFlowSpecIpv6 {
        @CAbi("sizeof(struct ibv_flow_spec_ipv6)")
        public static final int SIZE = 88;
        @CAbi(value = "offsetof(struct ibv_flow_spec_ipv6, type)", width = 4)
        public static final int TYPE_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_flow_spec_ipv6, size)", width = 2)
        public static final int SIZE_OFFSET = 4;
        @CAbi("offsetof(struct ibv_flow_spec_ipv6, val)")
        public static final int VAL_OFFSET = 8;
        @CAbi("offsetof(struct ibv_flow_spec_ipv6, mask)")
        public static final int MASK_OFFSET = 48;
        @CAbi(value = "offsetof(struct ibv_flow_ipv6_filter, src_ip)", width = 16)
        public static final int FILTER_SRC_IP_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_flow_ipv6_filter, dst_ip)", width = 16)
        public static final int FILTER_DST_IP_OFFSET = 16;
        @CAbi(value = "offsetof(struct ibv_flow_ipv6_filter, flow_label)", width = 4)
        public static final int FILTER_FLOW_LABEL_OFFSET = 32;
        @CAbi("sizeof(struct ibv_flow_ipv6_filter)")
        public static final int FILTER_SIZE = 40;

        private IbvFlowSpecIpv6() {
        }
    }

    /** {@code struct ibv_flow_spec_tcp_udp} (16 bytes); ports in network byte order, {@code val} at 6. */
    public static final class IbvFlowSpecTcpUdp {
        @CAbi("sizeof(struct ibv_flow_spec_tcp_udp)")
        public static final int SIZE = 16;
        @CAbi(value = "offsetof(struct ibv_flow_spec_tcp_udp, type)", width = 4)
        public static final int TYPE_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_flow_spec_tcp_udp, size)", width = 2)
        public static final int SIZE_OFFSET = 4;
        @CAbi("offsetof(struct ibv_flow_spec_tcp_udp, val)")
        public static final int VAL_OFFSET = 6;
        @CAbi("offsetof(struct ibv_flow_spec_tcp_udp, mask)")
        public static final int MASK_OFFSET = 10;
        @CAbi(value = "offsetof(struct ibv_flow_tcp_udp_filter, dst_port)", width = 2)
        public static final int FILTER_DST_PORT_OFFSET = 0;
        @CAbi(value = "offsetof(struct ibv_flow_tcp_udp_filter, src_port)", width = 2)
        public static final int FILTER_SRC_PORT_OFFSET = 2;
        @CAbi("sizeof(struct ibv_flow_tcp_udp_filter)")
        public static final int FILTER_SIZE = 4;

        private IbvFlowSpecTcpUdp() {
        }
    }

    /** {@code struct ibv_flow}: the handle {@code ibv_create_flow} returns; {@code ibv_destroy_flow} finds its context here. */
    public static final class IbvFlow {
        @CAbi(value = "offsetof(struct ibv_flow, context)", width = 8)
        public static final int CONTEXT_OFFSET = 8;

        private IbvFlow() {
        }
    }
}
