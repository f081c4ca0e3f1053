package dev.tern.afxdp.sys;

import dev.tern.core.sys.EventCounterWake;

/**
 * The Linux AF_XDP and bpf() ABI Tern uses, written by hand from {@code <linux/if_xdp.h>} and {@code <linux/bpf.h>}
 * and checked against the installed headers by {@code XdpAbiTest} (every {@link CAbi} constant).
 *
 * <pre>
 *   struct xdp_umem_reg   { u64 addr; u64 len; u32 chunk_size; u32 headroom; u32 flags; u32 tx_metadata_len; }
 *   struct sockaddr_xdp   { u16 family; u16 flags; u32 ifindex; u32 queue_id; u32 shared_umem_fd; }
 *   struct xdp_ring_offset{ u64 producer; u64 consumer; u64 desc; u64 flags; }
 *   struct xdp_mmap_offsets { xdp_ring_offset rx, tx, fr, cr; }
 *   struct xdp_desc       { u64 addr; u32 len; u32 options; }
 *   struct xdp_statistics { u64 rx_dropped, rx_invalid_descs, tx_invalid_descs, rx_ring_full,
 *                           rx_fill_ring_empty_descs, tx_ring_empty_descs; }
 * </pre>
 */
public final class XdpAbi {
    private XdpAbi() {
    }

    @CAbi("AF_XDP") public static final int AF_XDP = 44;
    @CAbi("SOCK_RAW") public static final int SOCK_RAW = 3;
    @CAbi("SOCK_CLOEXEC") public static final int SOCK_CLOEXEC = 0x80000;
    @CAbi("AF_INET") public static final int AF_INET = 2;
    @CAbi("SOCK_DGRAM") public static final int SOCK_DGRAM = 2;
    @CAbi("SOL_XDP") public static final int SOL_XDP = 283;

    @CAbi("XDP_MMAP_OFFSETS") public static final int XDP_MMAP_OFFSETS = 1;
    @CAbi("XDP_RX_RING") public static final int XDP_RX_RING = 2;
    @CAbi("XDP_TX_RING") public static final int XDP_TX_RING = 3;
    @CAbi("XDP_UMEM_REG") public static final int XDP_UMEM_REG = 4;
    @CAbi("XDP_UMEM_FILL_RING") public static final int XDP_UMEM_FILL_RING = 5;
    @CAbi("XDP_UMEM_COMPLETION_RING") public static final int XDP_UMEM_COMPLETION_RING = 6;
    @CAbi("XDP_STATISTICS") public static final int XDP_STATISTICS = 7;
    @CAbi("XDP_OPTIONS") public static final int XDP_OPTIONS = 8;
    @CAbi("XDP_OPTIONS_ZEROCOPY") public static final int XDP_OPTIONS_ZEROCOPY = 1;

    @CAbi("XDP_COPY") public static final int XDP_COPY = 1 << 1;
    @CAbi("XDP_ZEROCOPY") public static final int XDP_ZEROCOPY = 1 << 2;
    @CAbi("XDP_USE_NEED_WAKEUP") public static final int XDP_USE_NEED_WAKEUP = 1 << 3;
    /** Multi-buffer frames (Linux 6.6+): a frame may span several descriptors, each but the last flagged XDP_PKT_CONTD. */
    @CAbi("XDP_USE_SG") public static final int XDP_USE_SG = 1 << 4;
    /** In a descriptor's options: more of this frame follows in the next descriptor. */
    @CAbi("XDP_PKT_CONTD") public static final int XDP_PKT_CONTD = 1 << 0;
    @CAbi("XDP_RING_NEED_WAKEUP") public static final int XDP_RING_NEED_WAKEUP = 1;

    @CAbi("XDP_PGOFF_RX_RING") public static final long XDP_PGOFF_RX_RING = 0;
    @CAbi("XDP_PGOFF_TX_RING") public static final long XDP_PGOFF_TX_RING = 0x80000000L;
    @CAbi("XDP_UMEM_PGOFF_FILL_RING") public static final long XDP_UMEM_PGOFF_FILL_RING = 0x100000000L;
    @CAbi("XDP_UMEM_PGOFF_COMPLETION_RING") public static final long XDP_UMEM_PGOFF_COMPLETION_RING = 0x180000000L;
    @CAbi("XDP_PACKET_HEADROOM") public static final int XDP_PACKET_HEADROOM = 256;

    @CAbi("sizeof(struct xdp_umem_reg)") public static final int UMEM_REG_SIZE = 32;
    @CAbi("offsetof(struct xdp_umem_reg, addr)") public static final int UMEM_REG_ADDR = 0;
    @CAbi("offsetof(struct xdp_umem_reg, len)") public static final int UMEM_REG_LEN = 8;
    @CAbi("offsetof(struct xdp_umem_reg, chunk_size)") public static final int UMEM_REG_CHUNK_SIZE = 16;
    @CAbi("offsetof(struct xdp_umem_reg, headroom)") public static final int UMEM_REG_HEADROOM = 20;
    @CAbi("offsetof(struct xdp_umem_reg, flags)") public static final int UMEM_REG_FLAGS = 24;

    @CAbi("sizeof(struct sockaddr_xdp)") public static final int SOCKADDR_XDP_SIZE = 16;
    @CAbi("offsetof(struct sockaddr_xdp, sxdp_family)") public static final int SXDP_FAMILY = 0;
    @CAbi("offsetof(struct sockaddr_xdp, sxdp_flags)") public static final int SXDP_FLAGS = 2;
    @CAbi("offsetof(struct sockaddr_xdp, sxdp_ifindex)") public static final int SXDP_IFINDEX = 4;
    @CAbi("offsetof(struct sockaddr_xdp, sxdp_queue_id)") public static final int SXDP_QUEUE_ID = 8;
    @CAbi("offsetof(struct sockaddr_xdp, sxdp_shared_umem_fd)") public static final int SXDP_SHARED_UMEM_FD = 12;

    @CAbi("sizeof(struct xdp_ring_offset)") public static final int RING_OFFSET_SIZE = 32;
    @CAbi("offsetof(struct xdp_ring_offset, producer)") public static final int RING_OFFSET_PRODUCER = 0;
    @CAbi("offsetof(struct xdp_ring_offset, consumer)") public static final int RING_OFFSET_CONSUMER = 8;
    @CAbi("offsetof(struct xdp_ring_offset, desc)") public static final int RING_OFFSET_DESC = 16;
    @CAbi("offsetof(struct xdp_ring_offset, flags)") public static final int RING_OFFSET_FLAGS = 24;

    @CAbi("sizeof(struct xdp_mmap_offsets)") public static final int MMAP_OFFSETS_SIZE = 128;
    @CAbi("offsetof(struct xdp_mmap_offsets, rx)") public static final int MMAP_OFFSETS_RX = 0;
    @CAbi("offsetof(struct xdp_mmap_offsets, tx)") public static final int MMAP_OFFSETS_TX = 32;
    @CAbi("offsetof(struct xdp_mmap_offsets, fr)") public static final int MMAP_OFFSETS_FR = 64;
    @CAbi("offsetof(struct xdp_mmap_offsets, cr)") public static final int MMAP_OFFSETS_CR = 96;

    @CAbi("sizeof(struct xdp_desc)") public static final int DESC_SIZE = 16;
    @CAbi("offsetof(struct xdp_desc, addr)") public static final int DESC_ADDR = 0;
    @CAbi("offsetof(struct xdp_desc, len)") public static final int DESC_LEN = 8;
    @CAbi("offsetof(struct xdp_desc, options)") public static final int DESC_OPTIONS = 12;
    /** A fill or completion ring entry: one u64 UMEM address. */
    @CAbi("sizeof(__u64)") public static final int ADDR_SIZE = 8;

    @CAbi("sizeof(struct xdp_statistics)") public static final int STATISTICS_SIZE = 48;
    @CAbi("offsetof(struct xdp_statistics, rx_dropped)") public static final int STAT_RX_DROPPED = 0;
    @CAbi("offsetof(struct xdp_statistics, rx_invalid_descs)") public static final int STAT_RX_INVALID_DESCS = 8;
    @CAbi("offsetof(struct xdp_statistics, tx_invalid_descs)") public static final int STAT_TX_INVALID_DESCS = 16;
    @CAbi("offsetof(struct xdp_statistics, rx_ring_full)") public static final int STAT_RX_RING_FULL = 24;
    @CAbi("offsetof(struct xdp_statistics, rx_fill_ring_empty_descs)") public static final int STAT_RX_FILL_RING_EMPTY = 32;
    @CAbi("offsetof(struct xdp_statistics, tx_ring_empty_descs)") public static final int STAT_TX_RING_EMPTY = 40;

    // ---- mmap, poll, send flags, ioctl (libc and <linux/sockios.h>) ----
    @CAbi("PROT_READ") public static final int PROT_READ = 1;
    @CAbi("PROT_WRITE") public static final int PROT_WRITE = 2;
    @CAbi("MAP_SHARED") public static final int MAP_SHARED = 1;
    @CAbi("MAP_POPULATE") public static final int MAP_POPULATE = 0x8000;
    @CAbi("SOL_SOCKET") public static final int SOL_SOCKET = 1;
    @CAbi("SO_BUSY_POLL") public static final int SO_BUSY_POLL = 46;
    @CAbi("SO_PREFER_BUSY_POLL") public static final int SO_PREFER_BUSY_POLL = 69;
    @CAbi("SO_BUSY_POLL_BUDGET") public static final int SO_BUSY_POLL_BUDGET = 70;
    @CAbi("MSG_DONTWAIT") public static final int MSG_DONTWAIT = 0x40;
    // poll(2): the layout EventCounterWake.awaitBeside writes, taken from there so that this class's check covers it.
    @CAbi("POLLIN") public static final int POLLIN = EventCounterWake.POLLIN;
    @CAbi("sizeof(struct pollfd)") public static final int POLLFD_SIZE = EventCounterWake.POLLFD_SIZE;
    @CAbi("offsetof(struct pollfd, fd)") public static final int POLLFD_FD_OFFSET = EventCounterWake.POLLFD_FD_OFFSET;
    @CAbi("offsetof(struct pollfd, events)")
    public static final int POLLFD_EVENTS_OFFSET = EventCounterWake.POLLFD_EVENTS_OFFSET;
    @CAbi("offsetof(struct pollfd, revents)")
    public static final int POLLFD_REVENTS_OFFSET = EventCounterWake.POLLFD_REVENTS_OFFSET;
    @CAbi("EFD_NONBLOCK") public static final int EFD_NONBLOCK = 0x800;
    @CAbi("EFD_CLOEXEC") public static final int EFD_CLOEXEC = 0x80000;
    @CAbi("SIOCGIFHWADDR") public static final long SIOCGIFHWADDR = 0x8927;
    @CAbi("SIOCGIFMTU") public static final long SIOCGIFMTU = 0x8921;
    @CAbi("SIOCGIFFLAGS") public static final long SIOCGIFFLAGS = 0x8913;
    @CAbi("IFF_UP") public static final int IFF_UP = 1;
    @CAbi("sizeof(struct ifreq)") public static final int IFREQ_SIZE = 40;
    @CAbi("offsetof(struct ifreq, ifr_ifru)") public static final int IFREQ_UNION = 16;
    @CAbi("offsetof(struct ifreq, ifr_hwaddr.sa_data)") public static final int IFREQ_HWADDR_DATA = 18;
    @CAbi("IFNAMSIZ") public static final int IFNAMSIZ = 16;

    // ---- bpf(2) ----
    @CAbi("__NR_bpf") public static final long SYS_BPF = 321;
    @CAbi("BPF_MAP_CREATE") public static final int BPF_MAP_CREATE = 0;
    @CAbi("BPF_MAP_LOOKUP_ELEM") public static final int BPF_MAP_LOOKUP_ELEM = 1;
    @CAbi("BPF_MAP_UPDATE_ELEM") public static final int BPF_MAP_UPDATE_ELEM = 2;
    @CAbi("BPF_MAP_DELETE_ELEM") public static final int BPF_MAP_DELETE_ELEM = 3;
    @CAbi("BPF_MAP_TYPE_HASH") public static final int BPF_MAP_TYPE_HASH = 1;
    @CAbi("BPF_MAP_TYPE_ARRAY") public static final int BPF_MAP_TYPE_ARRAY = 2;
    @CAbi("BPF_FUNC_map_lookup_elem") public static final int BPF_FUNC_MAP_LOOKUP_ELEM = 1;
    @CAbi("BPF_PROG_LOAD") public static final int BPF_PROG_LOAD = 5;
    @CAbi("BPF_LINK_CREATE") public static final int BPF_LINK_CREATE = 28;
    @CAbi("BPF_MAP_TYPE_XSKMAP") public static final int BPF_MAP_TYPE_XSKMAP = 17;
    @CAbi("BPF_PROG_TYPE_XDP") public static final int BPF_PROG_TYPE_XDP = 6;
    @CAbi("BPF_XDP") public static final int BPF_XDP = 37;
    @CAbi("XDP_FLAGS_UPDATE_IF_NOEXIST") public static final int XDP_FLAGS_UPDATE_IF_NOEXIST = 1;
    @CAbi("XDP_FLAGS_SKB_MODE") public static final int XDP_FLAGS_SKB_MODE = 2;
    @CAbi("XDP_FLAGS_DRV_MODE") public static final int XDP_FLAGS_DRV_MODE = 4;
    @CAbi("XDP_DROP") public static final int XDP_DROP = 1;
    @CAbi("XDP_PASS") public static final int XDP_PASS = 2;
    @CAbi("BPF_FUNC_get_prandom_u32") public static final int BPF_FUNC_GET_PRANDOM_U32 = 7;
    @CAbi("BPF_FUNC_redirect_map") public static final int BPF_FUNC_REDIRECT_MAP = 51;
    @CAbi("BPF_PSEUDO_MAP_FD") public static final int BPF_PSEUDO_MAP_FD = 1;
    /** A 64-bit load whose value is the address of a one-entry array map's value (Linux 5.2+): no lookup call. */
    @CAbi("BPF_PSEUDO_MAP_VALUE") public static final int BPF_PSEUDO_MAP_VALUE = 2;
    @CAbi("BPF_ATOMIC") public static final int BPF_ATOMIC = 0xc0;
    @CAbi("BPF_ADD") public static final int BPF_ADD = 0x00;
    /** Bytes of {@code union bpf_attr} Tern passes: covers every command it uses; the kernel zero-extends. */
    public static final int BPF_ATTR_SIZE = 128;

    @CAbi("offsetof(union bpf_attr, map_type)") public static final int MAP_CREATE_TYPE = 0;
    @CAbi("offsetof(union bpf_attr, key_size)") public static final int MAP_CREATE_KEY_SIZE = 4;
    @CAbi("offsetof(union bpf_attr, value_size)") public static final int MAP_CREATE_VALUE_SIZE = 8;
    @CAbi("offsetof(union bpf_attr, max_entries)") public static final int MAP_CREATE_MAX_ENTRIES = 12;
    @CAbi("offsetof(union bpf_attr, map_name)") public static final int MAP_CREATE_NAME = 28;

    @CAbi("offsetof(union bpf_attr, map_fd)") public static final int MAP_UPDATE_FD = 0;
    @CAbi("offsetof(union bpf_attr, key)") public static final int MAP_UPDATE_KEY = 8;
    @CAbi("offsetof(union bpf_attr, value)") public static final int MAP_UPDATE_VALUE = 16;
    @CAbi("offsetof(union bpf_attr, flags)") public static final int MAP_UPDATE_FLAGS = 24;

    @CAbi("offsetof(union bpf_attr, prog_type)") public static final int PROG_LOAD_TYPE = 0;
    @CAbi("offsetof(union bpf_attr, insn_cnt)") public static final int PROG_LOAD_INSN_CNT = 4;
    @CAbi("offsetof(union bpf_attr, insns)") public static final int PROG_LOAD_INSNS = 8;
    @CAbi("offsetof(union bpf_attr, license)") public static final int PROG_LOAD_LICENSE = 16;
    @CAbi("offsetof(union bpf_attr, log_level)") public static final int PROG_LOAD_LOG_LEVEL = 24;
    @CAbi("offsetof(union bpf_attr, log_size)") public static final int PROG_LOAD_LOG_SIZE = 28;
    @CAbi("offsetof(union bpf_attr, log_buf)") public static final int PROG_LOAD_LOG_BUF = 32;
    @CAbi("offsetof(union bpf_attr, prog_flags)") public static final int PROG_LOAD_FLAGS = 44;
    /** The program understands multi-buffer frames (it sees only the first buffer through data/data_end). */
    @CAbi("BPF_F_XDP_HAS_FRAGS") public static final int BPF_F_XDP_HAS_FRAGS = 1 << 5;
    @CAbi("offsetof(union bpf_attr, prog_name)") public static final int PROG_LOAD_NAME = 48;
    @CAbi("offsetof(union bpf_attr, expected_attach_type)") public static final int PROG_LOAD_EXPECTED_ATTACH_TYPE = 68;

    @CAbi("offsetof(union bpf_attr, link_create.prog_fd)") public static final int LINK_CREATE_PROG_FD = 0;
    @CAbi("offsetof(union bpf_attr, link_create.target_ifindex)") public static final int LINK_CREATE_IFINDEX = 4;
    @CAbi("offsetof(union bpf_attr, link_create.attach_type)") public static final int LINK_CREATE_ATTACH_TYPE = 8;
    @CAbi("offsetof(union bpf_attr, link_create.flags)") public static final int LINK_CREATE_FLAGS = 12;

    // ---- struct xdp_md, the program's context ----
    @CAbi("offsetof(struct xdp_md, data)") public static final int XDP_MD_DATA = 0;
    @CAbi("offsetof(struct xdp_md, data_end)") public static final int XDP_MD_DATA_END = 4;
    @CAbi("offsetof(struct xdp_md, rx_queue_index)") public static final int XDP_MD_RX_QUEUE_INDEX = 16;
}
