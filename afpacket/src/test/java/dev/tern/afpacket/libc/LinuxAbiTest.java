package dev.tern.afpacket.libc;

import dev.tern.core.testing.ExternalTools;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An ABI test: every constant in {@link LinuxAbi} is compared with what gcc computes from the installed headers
 * (linux-libc-dev, glibc). Each Java constant is paired with the C expression it stands for.
 */
class LinuxAbiTest {
    /** Java constant name to C expression; every public constant of LinuxAbi must appear here. */
    private static final Map<String, String> C_EXPRESSIONS = new LinkedHashMap<>();

    private static void c(String javaName, String cExpression) {
        C_EXPRESSIONS.put(javaName, cExpression);
    }

    static {
        c("AF_PACKET", "AF_PACKET");
        c("AF_INET", "AF_INET");
        c("SOCK_RAW", "SOCK_RAW");
        c("SOCK_DGRAM", "SOCK_DGRAM");
        c("SOCK_CLOEXEC", "SOCK_CLOEXEC");
        c("ETH_P_ALL", "ETH_P_ALL");
        c("ETH_HLEN", "ETH_HLEN");
        c("MSG_DONTWAIT", "MSG_DONTWAIT");

        c("SOCKADDR_LL_SIZE", "sizeof(struct sockaddr_ll)");
        c("SOCKADDR_LL_FAMILY_OFFSET", "offsetof(struct sockaddr_ll, sll_family)");
        c("SOCKADDR_LL_PROTOCOL_OFFSET", "offsetof(struct sockaddr_ll, sll_protocol)");
        c("SOCKADDR_LL_IFINDEX_OFFSET", "offsetof(struct sockaddr_ll, sll_ifindex)");
        c("SOCKADDR_LL_PKTTYPE_OFFSET", "offsetof(struct sockaddr_ll, sll_pkttype)");

        c("SOL_PACKET", "SOL_PACKET");
        c("PACKET_ADD_MEMBERSHIP", "PACKET_ADD_MEMBERSHIP");
        c("PACKET_DROP_MEMBERSHIP", "PACKET_DROP_MEMBERSHIP");
        c("PACKET_RX_RING", "PACKET_RX_RING");
        c("PACKET_STATISTICS", "PACKET_STATISTICS");
        c("PACKET_VERSION", "PACKET_VERSION");
        c("PACKET_TX_RING", "PACKET_TX_RING");
        c("PACKET_LOSS", "PACKET_LOSS");
        c("PACKET_VNET_HDR", "PACKET_VNET_HDR");
        c("PACKET_FANOUT", "PACKET_FANOUT");
        c("PACKET_QDISC_BYPASS", "PACKET_QDISC_BYPASS");
        c("PACKET_IGNORE_OUTGOING", "PACKET_IGNORE_OUTGOING");
        c("PACKET_FANOUT_HASH", "PACKET_FANOUT_HASH");
        c("PACKET_FANOUT_DATA", "PACKET_FANOUT_DATA");
        c("PACKET_FANOUT_CBPF", "PACKET_FANOUT_CBPF");
        // Linux 6.10's uapi value; the installed headers may predate it (then the literal stands in for it).
        c("PACKET_FANOUT_FLAG_IGNORE_OUTGOING", "PACKET_FANOUT_FLAG_IGNORE_OUTGOING_OR_LITERAL");
        c("SOCK_FPROG_SIZE", "sizeof(struct sock_fprog)");
        c("SOCK_FPROG_LEN_OFFSET", "offsetof(struct sock_fprog, len)");
        c("SOCK_FPROG_FILTER_OFFSET", "offsetof(struct sock_fprog, filter)");
        c("SOCK_FILTER_SIZE", "sizeof(struct sock_filter)");
        c("SOL_SOCKET", "SOL_SOCKET");
        c("SO_ATTACH_FILTER", "SO_ATTACH_FILTER");
        c("SO_DETACH_FILTER", "SO_DETACH_FILTER");
        c("PACKET_MR_MULTICAST", "PACKET_MR_MULTICAST");
        c("PACKET_MR_PROMISC", "PACKET_MR_PROMISC");
        c("PACKET_MR_UNICAST", "PACKET_MR_UNICAST");
        c("TPACKET_V2", "TPACKET_V2");
        c("TPACKET_V3", "TPACKET_V3");

        c("PACKET_MREQ_SIZE", "sizeof(struct packet_mreq)");
        c("PACKET_MREQ_IFINDEX_OFFSET", "offsetof(struct packet_mreq, mr_ifindex)");
        c("PACKET_MREQ_TYPE_OFFSET", "offsetof(struct packet_mreq, mr_type)");
        c("PACKET_MREQ_ALEN_OFFSET", "offsetof(struct packet_mreq, mr_alen)");
        c("PACKET_MREQ_ADDRESS_OFFSET", "offsetof(struct packet_mreq, mr_address)");

        c("TPACKET_REQ_SIZE", "sizeof(struct tpacket_req)");
        c("TPACKET_REQ3_SIZE", "sizeof(struct tpacket_req3)");
        c("TPACKET_REQ3_BLOCK_SIZE_OFFSET", "offsetof(struct tpacket_req3, tp_block_size)");
        c("TPACKET_REQ3_BLOCK_NR_OFFSET", "offsetof(struct tpacket_req3, tp_block_nr)");
        c("TPACKET_REQ3_FRAME_SIZE_OFFSET", "offsetof(struct tpacket_req3, tp_frame_size)");
        c("TPACKET_REQ3_FRAME_NR_OFFSET", "offsetof(struct tpacket_req3, tp_frame_nr)");
        c("TPACKET_REQ3_RETIRE_BLK_TOV_OFFSET", "offsetof(struct tpacket_req3, tp_retire_blk_tov)");
        c("TPACKET_REQ3_SIZEOF_PRIV_OFFSET", "offsetof(struct tpacket_req3, tp_sizeof_priv)");
        c("TPACKET_REQ3_FEATURE_REQ_WORD_OFFSET", "offsetof(struct tpacket_req3, tp_feature_req_word)");

        c("TPACKET_BLOCK_DESC_SIZE", "sizeof(struct tpacket_block_desc)");
        c("BLOCK_STATUS_OFFSET", "offsetof(struct tpacket_block_desc, hdr.bh1.block_status)");
        c("BLOCK_NUM_PKTS_OFFSET", "offsetof(struct tpacket_block_desc, hdr.bh1.num_pkts)");
        c("BLOCK_OFFSET_TO_FIRST_PKT_OFFSET", "offsetof(struct tpacket_block_desc, hdr.bh1.offset_to_first_pkt)");
        c("BLOCK_LEN_OFFSET", "offsetof(struct tpacket_block_desc, hdr.bh1.blk_len)");
        c("BLOCK_SEQ_NUM_OFFSET", "offsetof(struct tpacket_block_desc, hdr.bh1.seq_num)");

        c("TPACKET3_HDR_SIZE", "sizeof(struct tpacket3_hdr)");
        c("TPACKET3_HDR_NEXT_OFFSET_OFFSET", "offsetof(struct tpacket3_hdr, tp_next_offset)");
        c("TPACKET3_HDR_SNAPLEN_OFFSET", "offsetof(struct tpacket3_hdr, tp_snaplen)");
        c("TPACKET3_HDR_LEN_OFFSET", "offsetof(struct tpacket3_hdr, tp_len)");
        c("TPACKET3_HDR_STATUS_OFFSET", "offsetof(struct tpacket3_hdr, tp_status)");
        c("TPACKET3_HDR_MAC_OFFSET", "offsetof(struct tpacket3_hdr, tp_mac)");
        c("TPACKET3_HDR_NET_OFFSET", "offsetof(struct tpacket3_hdr, tp_net)");
        c("TPACKET3_HDR_VLAN_TCI_OFFSET", "offsetof(struct tpacket3_hdr, hv1.tp_vlan_tci)");
        c("TPACKET3_HDR_VLAN_TPID_OFFSET", "offsetof(struct tpacket3_hdr, hv1.tp_vlan_tpid)");
        c("TPACKET3_HDRLEN", "TPACKET3_HDRLEN");

        c("TPACKET2_HDR_SIZE", "sizeof(struct tpacket2_hdr)");
        c("TPACKET2_HDR_STATUS_OFFSET", "offsetof(struct tpacket2_hdr, tp_status)");
        c("TPACKET2_HDR_LEN_OFFSET", "offsetof(struct tpacket2_hdr, tp_len)");
        c("TPACKET2_HDR_SNAPLEN_OFFSET", "offsetof(struct tpacket2_hdr, tp_snaplen)");
        c("TPACKET2_HDR_MAC_OFFSET", "offsetof(struct tpacket2_hdr, tp_mac)");
        c("TPACKET2_HDR_VLAN_TCI_OFFSET", "offsetof(struct tpacket2_hdr, tp_vlan_tci)");
        c("TPACKET2_HDR_VLAN_TPID_OFFSET", "offsetof(struct tpacket2_hdr, tp_vlan_tpid)");
        c("TPACKET2_HDRLEN", "TPACKET2_HDRLEN");
        c("TPACKET2_DATA_OFFSET", "(TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))");
        c("TPACKET_ALIGNMENT", "TPACKET_ALIGNMENT");

        c("TP_STATUS_KERNEL", "TP_STATUS_KERNEL");
        c("TP_STATUS_USER", "TP_STATUS_USER");
        c("TP_STATUS_CSUMNOTREADY", "TP_STATUS_CSUMNOTREADY");
        c("TP_STATUS_VLAN_VALID", "TP_STATUS_VLAN_VALID");
        c("TP_STATUS_VLAN_TPID_VALID", "TP_STATUS_VLAN_TPID_VALID");
        c("TP_STATUS_CSUM_VALID", "TP_STATUS_CSUM_VALID");
        c("TP_STATUS_AVAILABLE", "TP_STATUS_AVAILABLE");
        c("TP_STATUS_SEND_REQUEST", "TP_STATUS_SEND_REQUEST");
        c("TP_STATUS_SENDING", "TP_STATUS_SENDING");
        c("TP_STATUS_WRONG_FORMAT", "TP_STATUS_WRONG_FORMAT");

        c("TPACKET_STATS_V3_SIZE", "sizeof(struct tpacket_stats_v3)");
        c("TPACKET_STATS_V3_PACKETS_OFFSET", "offsetof(struct tpacket_stats_v3, tp_packets)");
        c("TPACKET_STATS_V3_DROPS_OFFSET", "offsetof(struct tpacket_stats_v3, tp_drops)");
        c("TPACKET_STATS_V3_FREEZE_Q_CNT_OFFSET", "offsetof(struct tpacket_stats_v3, tp_freeze_q_cnt)");

        c("VIRTIO_NET_HDR_SIZE", "sizeof(struct virtio_net_hdr)");
        c("VIRTIO_NET_HDR_FLAGS_OFFSET", "offsetof(struct virtio_net_hdr, flags)");
        c("VIRTIO_NET_HDR_GSO_TYPE_OFFSET", "offsetof(struct virtio_net_hdr, gso_type)");
        c("VIRTIO_NET_HDR_HDR_LEN_OFFSET", "offsetof(struct virtio_net_hdr, hdr_len)");
        c("VIRTIO_NET_HDR_GSO_SIZE_OFFSET", "offsetof(struct virtio_net_hdr, gso_size)");
        c("VIRTIO_NET_HDR_CSUM_START_OFFSET", "offsetof(struct virtio_net_hdr, csum_start)");
        c("VIRTIO_NET_HDR_CSUM_OFFSET_OFFSET", "offsetof(struct virtio_net_hdr, csum_offset)");
        c("VIRTIO_NET_HDR_F_NEEDS_CSUM", "VIRTIO_NET_HDR_F_NEEDS_CSUM");
        c("VIRTIO_NET_HDR_F_DATA_VALID", "VIRTIO_NET_HDR_F_DATA_VALID");
        c("VIRTIO_NET_HDR_GSO_NONE", "VIRTIO_NET_HDR_GSO_NONE");
        c("VIRTIO_NET_HDR_GSO_TCPV4", "VIRTIO_NET_HDR_GSO_TCPV4");
        c("VIRTIO_NET_HDR_GSO_UDP", "VIRTIO_NET_HDR_GSO_UDP");
        c("VIRTIO_NET_HDR_GSO_TCPV6", "VIRTIO_NET_HDR_GSO_TCPV6");
        c("VIRTIO_NET_HDR_GSO_ECN", "VIRTIO_NET_HDR_GSO_ECN");

        c("IFNAMSIZ", "IFNAMSIZ");
        c("IFREQ_SIZE", "sizeof(struct ifreq)");
        c("IFREQ_NAME_OFFSET", "offsetof(struct ifreq, ifr_name)");
        c("IFREQ_UNION_OFFSET", "offsetof(struct ifreq, ifr_mtu)");
        c("IFREQ_HWADDR_DATA_OFFSET", "offsetof(struct ifreq, ifr_hwaddr.sa_data)");
        c("SIOCGIFFLAGS", "SIOCGIFFLAGS");
        c("SIOCGIFHWADDR", "SIOCGIFHWADDR");
        c("SIOCGIFMTU", "SIOCGIFMTU");
        c("IFF_UP", "IFF_UP");
        c("ARPHRD_ETHER", "ARPHRD_ETHER");

        c("PROT_READ", "PROT_READ");
        c("PROT_WRITE", "PROT_WRITE");
        c("MAP_SHARED", "MAP_SHARED");
        c("EFD_NONBLOCK", "EFD_NONBLOCK");
        c("EFD_CLOEXEC", "EFD_CLOEXEC");
        c("POLLIN", "POLLIN");
        c("POLLERR", "POLLERR");
        c("POLLFD_SIZE", "sizeof(struct pollfd)");
        c("POLLFD_FD_OFFSET", "offsetof(struct pollfd, fd)");
        c("POLLFD_EVENTS_OFFSET", "offsetof(struct pollfd, events)");
        c("POLLFD_REVENTS_OFFSET", "offsetof(struct pollfd, revents)");
        c("O_RDONLY", "O_RDONLY");
        c("O_CLOEXEC", "O_CLOEXEC");
        c("CLONE_NEWNET", "CLONE_NEWNET");

        c("EPERM", "EPERM");
        c("ENOENT", "ENOENT");
        c("EINTR", "EINTR");
        c("ENXIO", "ENXIO");
        c("EAGAIN", "EAGAIN");
        c("ENOMEM", "ENOMEM");
        c("EACCES", "EACCES");
        c("EBUSY", "EBUSY");
        c("ENODEV", "ENODEV");
        c("EINVAL", "EINVAL");
        c("EMSGSIZE", "EMSGSIZE");
        c("ENOPROTOOPT", "ENOPROTOOPT");
        c("EAFNOSUPPORT", "EAFNOSUPPORT");
        c("ENETDOWN", "ENETDOWN");
        c("ENOBUFS", "ENOBUFS");
    }

    private static final String INCLUDES = """
        #define _GNU_SOURCE
        #include <stdio.h>
        #include <stddef.h>
        #include <errno.h>
        #include <fcntl.h>
        #include <poll.h>
        #include <sched.h>
        #include <sys/eventfd.h>
        #include <sys/mman.h>
        #include <sys/socket.h>
        #include <sys/ioctl.h>
        #include <net/if.h>
        #include <net/if_arp.h>
        #include <linux/if_ether.h>
        #include <linux/if_packet.h>
        #include <linux/filter.h>
        #ifdef PACKET_FANOUT_FLAG_IGNORE_OUTGOING
        #define PACKET_FANOUT_FLAG_IGNORE_OUTGOING_OR_LITERAL PACKET_FANOUT_FLAG_IGNORE_OUTGOING
        #else
        #define PACKET_FANOUT_FLAG_IGNORE_OUTGOING_OR_LITERAL 0x4000
        #endif
        #include <linux/virtio_net.h>
        """;

    @Test
    void everyConstantMatchesTheInstalledHeaders(@TempDir Path dir) throws IOException {
        final Path gcc = ExternalTools.require("gcc", "gcc");
        final StringBuilder source = new StringBuilder(INCLUDES).append("int main(void) {\n");
        for (Map.Entry<String, String> entry : C_EXPRESSIONS.entrySet()) {
            source.append("    printf(\"%s %lld\\n\", \"").append(entry.getKey()).append("\", (long long) (")
                .append(entry.getValue()).append("));\n");
        }
        source.append("    return 0;\n}\n");
        final Path c = dir.resolve("abi.c");
        final Path binary = dir.resolve("abi");
        Files.writeString(c, source);
        ExternalTools.run(Duration.ofSeconds(60), gcc.toString(), "-std=c11", "-Wall", "-Werror", "-o", binary.toString(), c.toString())
            .orFail("gcc");
        final String output = ExternalTools.run(Duration.ofSeconds(10), binary.toString()).orFail("abi program").stdout();

        final Map<String, Long> java = javaConstants();
        final List<String> mismatches = new ArrayList<>();
        int checked = 0;
        for (String line : output.strip().split("\n")) {
            final String[] parts = line.split(" ");
            final long fromC = Long.parseLong(parts[1]);
            final long fromJava = java.get(parts[0]);
            checked++;
            if (fromC != fromJava) {
                mismatches.add(parts[0] + ": Java " + fromJava + ", C " + fromC + " (" + C_EXPRESSIONS.get(parts[0]) + ")");
            }
        }
        assertEquals(List.of(), mismatches);
        assertEquals(C_EXPRESSIONS.size(), checked);
    }

    @Test
    void everyJavaConstantHasACounterpartInTheCheck() {
        final TreeSet<String> unchecked = new TreeSet<>(javaConstants().keySet());
        unchecked.removeAll(C_EXPRESSIONS.keySet());
        assertEquals(new TreeSet<String>(), unchecked, "constants in LinuxAbi that LinuxAbiTest does not compare with C");
    }

    private static Map<String, Long> javaConstants() {
        final Map<String, Long> constants = new LinkedHashMap<>();
        for (Field field : LinuxAbi.class.getDeclaredFields()) {
            final int modifiers = field.getModifiers();
            if (!Modifier.isPublic(modifiers) || !Modifier.isStatic(modifiers)) {
                continue;
            }
            try {
                constants.put(field.getName(), ((Number) field.get(null)).longValue());
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
        return constants;
    }
}
