package dev.tern.afpacket.libc;

import dev.tern.core.sys.EventCounterWake;
import dev.tern.core.sys.Libc;

/**
 * Linux and glibc constants and struct layouts (x86-64 / LP64) that the AF_PACKET link and the namespace harness
 * (testkit, through core's Libc) use, written by hand because jextract is not available. {@code LinuxAbiTest} compiles a C program against the
 * installed headers ({@code linux-libc-dev}, glibc) with gcc and compares every constant here with
 * {@code offsetof}/{@code sizeof}/the macro, so a header change is caught, the way an ABI test would.
 *
 * <p>Naming: {@code STRUCT_FIELD_OFFSET} is {@code offsetof(struct, field)}; {@code STRUCT_SIZE} is {@code sizeof};
 * other names are the C macro's own name.
 */
public final class LinuxAbi {
    private LinuxAbi() {
    }

    // ---- socket(2), bind(2), sendto(2) ----
    public static final int AF_PACKET = 17;
    public static final int AF_INET = 2;
    public static final int SOCK_RAW = 3;
    public static final int SOCK_DGRAM = 2;
    public static final int SOCK_CLOEXEC = 0x80000;
    public static final int ETH_P_ALL = 0x0003;
    public static final int ETH_HLEN = 14;
    public static final int MSG_DONTWAIT = 0x40;

    // ---- struct sockaddr_ll (linux/if_packet.h) ----
    public static final int SOCKADDR_LL_SIZE = 20;
    public static final int SOCKADDR_LL_FAMILY_OFFSET = 0;
    public static final int SOCKADDR_LL_PROTOCOL_OFFSET = 2;
    public static final int SOCKADDR_LL_IFINDEX_OFFSET = 4;
    public static final int SOCKADDR_LL_PKTTYPE_OFFSET = 10;

    // ---- setsockopt(SOL_PACKET, ...) ----
    public static final int SOL_PACKET = 263;
    public static final int PACKET_ADD_MEMBERSHIP = 1;
    public static final int PACKET_DROP_MEMBERSHIP = 2;
    public static final int PACKET_RX_RING = 5;
    public static final int PACKET_STATISTICS = 6;
    public static final int PACKET_VERSION = 10;
    public static final int PACKET_TX_RING = 13;
    public static final int PACKET_LOSS = 14;
    public static final int PACKET_VNET_HDR = 15;
    public static final int PACKET_FANOUT = 18;
    public static final int PACKET_QDISC_BYPASS = 20;
    public static final int PACKET_IGNORE_OUTGOING = 23;
    public static final int PACKET_FANOUT_HASH = 0;
    public static final int PACKET_FANOUT_DATA = 22;
    /** Fanout by a classic BPF program's return value (the socket index), set with {@link #PACKET_FANOUT_DATA}. */
    public static final int PACKET_FANOUT_CBPF = 6;
    /** The group's hook ignores outgoing packets (Linux 6.10+; older kernels refuse it with EINVAL). */
    public static final int PACKET_FANOUT_FLAG_IGNORE_OUTGOING = 0x4000;

    // ---- struct sock_fprog (a classic BPF program: u16 length, then a pointer to the instructions) ----
    public static final int SOCK_FPROG_SIZE = 16;
    /** setsockopt level and options of a socket filter (asm-generic/socket.h). */
    public static final int SOL_SOCKET = 1;
    public static final int SO_ATTACH_FILTER = 26;
    public static final int SO_DETACH_FILTER = 27;
    public static final int SOCK_FPROG_LEN_OFFSET = 0;
    public static final int SOCK_FPROG_FILTER_OFFSET = 8;
    /** struct sock_filter: u16 code, u8 jt, u8 jf, u32 k. */
    public static final int SOCK_FILTER_SIZE = 8;
    public static final int PACKET_MR_MULTICAST = 0;
    public static final int PACKET_MR_PROMISC = 1;
    public static final int PACKET_MR_UNICAST = 3;
    public static final int TPACKET_V2 = 1;
    public static final int TPACKET_V3 = 2;

    // ---- struct packet_mreq ----
    public static final int PACKET_MREQ_SIZE = 16;
    public static final int PACKET_MREQ_IFINDEX_OFFSET = 0;
    public static final int PACKET_MREQ_TYPE_OFFSET = 4;
    public static final int PACKET_MREQ_ALEN_OFFSET = 6;
    public static final int PACKET_MREQ_ADDRESS_OFFSET = 8;

    // ---- struct tpacket_req (V2 TX ring) and tpacket_req3 (V3 RX ring) ----
    public static final int TPACKET_REQ_SIZE = 16;
    public static final int TPACKET_REQ3_SIZE = 28;
    public static final int TPACKET_REQ3_BLOCK_SIZE_OFFSET = 0;
    public static final int TPACKET_REQ3_BLOCK_NR_OFFSET = 4;
    public static final int TPACKET_REQ3_FRAME_SIZE_OFFSET = 8;
    public static final int TPACKET_REQ3_FRAME_NR_OFFSET = 12;
    public static final int TPACKET_REQ3_RETIRE_BLK_TOV_OFFSET = 16;
    public static final int TPACKET_REQ3_SIZEOF_PRIV_OFFSET = 20;
    public static final int TPACKET_REQ3_FEATURE_REQ_WORD_OFFSET = 24;

    // ---- struct tpacket_block_desc + tpacket_hdr_v1: offsets from the start of a V3 block ----
    public static final int TPACKET_BLOCK_DESC_SIZE = 48;
    public static final int BLOCK_STATUS_OFFSET = 8;
    public static final int BLOCK_NUM_PKTS_OFFSET = 12;
    public static final int BLOCK_OFFSET_TO_FIRST_PKT_OFFSET = 16;
    public static final int BLOCK_LEN_OFFSET = 20;
    public static final int BLOCK_SEQ_NUM_OFFSET = 24;

    // ---- struct tpacket3_hdr (one received frame in a V3 block) ----
    public static final int TPACKET3_HDR_SIZE = 48;
    public static final int TPACKET3_HDR_NEXT_OFFSET_OFFSET = 0;
    public static final int TPACKET3_HDR_SNAPLEN_OFFSET = 12;
    public static final int TPACKET3_HDR_LEN_OFFSET = 16;
    public static final int TPACKET3_HDR_STATUS_OFFSET = 20;
    public static final int TPACKET3_HDR_MAC_OFFSET = 24;
    public static final int TPACKET3_HDR_NET_OFFSET = 26;
    /** {@code hv1.tp_vlan_tci}: absolute offset in the header. */
    public static final int TPACKET3_HDR_VLAN_TCI_OFFSET = 32;
    /** {@code hv1.tp_vlan_tpid}: absolute offset in the header. */
    public static final int TPACKET3_HDR_VLAN_TPID_OFFSET = 36;
    /** {@code TPACKET3_HDRLEN}: the V3 header plus the {@code sockaddr_ll} the kernel writes after it. */
    public static final int TPACKET3_HDRLEN = 68;

    // ---- struct tpacket2_hdr (one TX slot) ----
    public static final int TPACKET2_HDR_SIZE = 32;
    public static final int TPACKET2_HDR_STATUS_OFFSET = 0;
    public static final int TPACKET2_HDR_LEN_OFFSET = 4;
    public static final int TPACKET2_HDR_SNAPLEN_OFFSET = 8;
    /** Where transmit data starts in a V2 slot: {@code TPACKET2_HDRLEN - sizeof(struct sockaddr_ll)}. */
    public static final int TPACKET2_DATA_OFFSET = 32;
    public static final int TPACKET2_HDR_MAC_OFFSET = 12;
    public static final int TPACKET2_HDR_VLAN_TCI_OFFSET = 24;
    public static final int TPACKET2_HDR_VLAN_TPID_OFFSET = 26;
    /** {@code TPACKET2_HDRLEN}: the V2 header plus the {@code sockaddr_ll} the kernel writes after it. */
    public static final int TPACKET2_HDRLEN = 52;
    public static final int TPACKET_ALIGNMENT = 16;

    // ---- tp_status / block_status bits ----
    public static final int TP_STATUS_KERNEL = 0;
    public static final int TP_STATUS_USER = 1;
    public static final int TP_STATUS_CSUMNOTREADY = 8;
    public static final int TP_STATUS_VLAN_VALID = 16;
    public static final int TP_STATUS_VLAN_TPID_VALID = 64;
    public static final int TP_STATUS_CSUM_VALID = 128;
    public static final int TP_STATUS_AVAILABLE = 0;
    public static final int TP_STATUS_SEND_REQUEST = 1;
    public static final int TP_STATUS_SENDING = 2;
    public static final int TP_STATUS_WRONG_FORMAT = 4;

    // ---- struct tpacket_stats_v3 ----
    public static final int TPACKET_STATS_V3_SIZE = 12;
    public static final int TPACKET_STATS_V3_PACKETS_OFFSET = 0;
    public static final int TPACKET_STATS_V3_DROPS_OFFSET = 4;
    public static final int TPACKET_STATS_V3_FREEZE_Q_CNT_OFFSET = 8;

    // ---- struct virtio_net_hdr (linux/virtio_net.h; legacy layout, host byte order) ----
    public static final int VIRTIO_NET_HDR_SIZE = 10;
    public static final int VIRTIO_NET_HDR_FLAGS_OFFSET = 0;
    public static final int VIRTIO_NET_HDR_GSO_TYPE_OFFSET = 1;
    public static final int VIRTIO_NET_HDR_HDR_LEN_OFFSET = 2;
    public static final int VIRTIO_NET_HDR_GSO_SIZE_OFFSET = 4;
    public static final int VIRTIO_NET_HDR_CSUM_START_OFFSET = 6;
    public static final int VIRTIO_NET_HDR_CSUM_OFFSET_OFFSET = 8;
    public static final int VIRTIO_NET_HDR_F_NEEDS_CSUM = 1;
    public static final int VIRTIO_NET_HDR_F_DATA_VALID = 2;
    public static final int VIRTIO_NET_HDR_GSO_NONE = 0;
    public static final int VIRTIO_NET_HDR_GSO_TCPV4 = 1;
    public static final int VIRTIO_NET_HDR_GSO_UDP = 3;
    public static final int VIRTIO_NET_HDR_GSO_TCPV6 = 4;
    public static final int VIRTIO_NET_HDR_GSO_ECN = 0x80;

    // ---- struct ifreq and ioctl(2) requests (linux/sockios.h, net/if.h) ----
    public static final int IFNAMSIZ = 16;
    public static final int IFREQ_SIZE = 40;
    public static final int IFREQ_NAME_OFFSET = 0;
    /** The union after the name: ifr_hwaddr, ifr_mtu, ifr_flags, ifr_ifindex all start here. */
    public static final int IFREQ_UNION_OFFSET = 16;
    /** {@code ifr_hwaddr.sa_data}: the MAC address bytes. */
    public static final int IFREQ_HWADDR_DATA_OFFSET = 18;
    public static final long SIOCGIFFLAGS = 0x8913;
    public static final long SIOCGIFHWADDR = 0x8927;
    public static final long SIOCGIFMTU = 0x8921;
    public static final int IFF_UP = 0x1;
    public static final int ARPHRD_ETHER = 1;

    // ---- mmap(2), poll(2), open(2), setns(2) ----
    public static final int PROT_READ = 0x1;
    public static final int PROT_WRITE = 0x2;
    public static final int MAP_SHARED = 0x1;
    public static final int EFD_NONBLOCK = 0x800;
    public static final int EFD_CLOEXEC = 0x80000;
    // poll(2): the layout EventCounterWake.awaitBeside writes, taken from there so that this class's check covers it.
    public static final int POLLIN = EventCounterWake.POLLIN;
    public static final int POLLERR = EventCounterWake.POLLERR;
    public static final int POLLFD_SIZE = EventCounterWake.POLLFD_SIZE;
    public static final int POLLFD_FD_OFFSET = EventCounterWake.POLLFD_FD_OFFSET;
    public static final int POLLFD_EVENTS_OFFSET = EventCounterWake.POLLFD_EVENTS_OFFSET;
    public static final int POLLFD_REVENTS_OFFSET = EventCounterWake.POLLFD_REVENTS_OFFSET;
    // open(2) and setns(2): taken from core's Libc, where testkit's NetworkNamespace finds them, so that this class's
    // check covers them.
    public static final int O_RDONLY = Libc.O_RDONLY;
    public static final int O_CLOEXEC = Libc.O_CLOEXEC;
    public static final int CLONE_NEWNET = Libc.CLONE_NEWNET;

    // ---- errno values the link treats specially ----
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int ENXIO = 6;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EBUSY = 16;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int EMSGSIZE = 90;
    public static final int ENOPROTOOPT = 92;
    public static final int EAFNOSUPPORT = 97;
    public static final int ENETDOWN = 100;
    public static final int ENOBUFS = 105;
}
