/*
 * Test vectors for rawqp's Java encoders, produced by the rdma-core header inlines themselves.
 *
 * Reads one request per line on stdin, prints one line of hex (and decoded values) per request:
 *
 *   wqe PI OPCODE QPN FM_CE_SE CS_FLAGS MSS INLINE_HEX DATA_LEN LKEY ADDR
 *       a send WQE built with mlx5dv_set_ctrl_seg, mlx5dv_set_eth_seg and mlx5dv_set_data_seg in a zeroed buffer;
 *       DATA_LEN 0 means no data segment. Prints the ds units the WQE has, as hex.
 *   cqe OP_OWN BYTE_CNT WQE_COUNTER HDS_IP_EXT L4_HDR_TYPE_ETC SYNDROME VENDOR_SYND
 *       a struct mlx5_cqe64 with those fields (big-endian where the header says __be); prints its 64 bytes as hex,
 *       then mlx5dv_get_cqe_owner, mlx5dv_get_cqe_opcode, mlx5dv_get_cqe_format of it.
 *   flow MAC_HEX IPV4_HEX PORT TCP(1)|UDP(0) IBV_PORT
 *       struct ibv_flow_attr + eth + ipv4 + tcp/udp specs matching dst MAC, dst IP and dst port; prints the bytes.
 *   flow6 MAC_HEX IPV6_HEX DONT_TRAP(1|0) IBV_PORT
 *       struct ibv_flow_attr + eth + ipv6 specs matching dst MAC and dst IPv6 address, IBV_FLOW_ATTR_FLAGS_DONT_TRAP
 *       when asked; prints the bytes.
 *
 * All numbers are decimal except *_HEX. Written for rawqp's tests; not part of Tern's runtime.
 */
#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

static void print_hex(const uint8_t *bytes, size_t length)
{
	for (size_t i = 0; i < length; i++)
		printf("%02x", bytes[i]);
}

static size_t parse_hex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = strlen(hex) / 2;
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		unsigned int byte;
		sscanf(hex + 2 * i, "%2x", &byte);
		out[i] = (uint8_t) byte;
	}
	return n;
}

/* Bytes the Ethernet segment takes with n inline bytes: the fixed part up to inline_hdr_start, then the inline
 * bytes, rounded up to 16-byte units, and never less than the struct (libmlx5 qp.c, set_eth_seg). */
static size_t eth_segment_bytes(size_t inline_length)
{
	size_t bytes = (offsetof(struct mlx5_wqe_eth_seg, inline_hdr_start) + inline_length + 15) & ~(size_t) 15;
	return bytes < sizeof(struct mlx5_wqe_eth_seg) ? sizeof(struct mlx5_wqe_eth_seg) : bytes;
}

static void wqe(void)
{
	unsigned int pi, opcode, qpn, fm_ce_se, cs_flags, mss, data_length, lkey;
	unsigned long long address;
	char inline_hex[1024];
	uint8_t inline_bytes[512];
	uint8_t buffer[1024] __attribute__((aligned(64)));

	if (scanf("%u %u %u %u %u %u %1023s %u %u %llu", &pi, &opcode, &qpn, &fm_ce_se, &cs_flags, &mss, inline_hex,
		  &data_length, &lkey, &address) != 10) {
		fprintf(stderr, "bad wqe line\n");
		exit(2);
	}
	size_t inline_length = parse_hex(inline_hex, inline_bytes, sizeof(inline_bytes));
	size_t eth_bytes = eth_segment_bytes(inline_length);
	size_t total = sizeof(struct mlx5_wqe_ctrl_seg) + eth_bytes + (data_length ? sizeof(struct mlx5_wqe_data_seg) : 0);
	uint8_t ds = (uint8_t) (total / 16);

	memset(buffer, 0, sizeof(buffer));
	struct mlx5_wqe_ctrl_seg *ctrl = (struct mlx5_wqe_ctrl_seg *) buffer;
	struct mlx5_wqe_eth_seg *eth = (struct mlx5_wqe_eth_seg *) (buffer + sizeof(*ctrl));
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t) pi, (uint8_t) opcode, 0, qpn, (uint8_t) fm_ce_se, ds, 0, 0);
	mlx5dv_set_eth_seg(eth, (uint8_t) cs_flags, (uint16_t) mss, (uint16_t) inline_length, inline_bytes);
	if (data_length) {
		struct mlx5_wqe_data_seg *data = (struct mlx5_wqe_data_seg *) ((uint8_t *) eth + eth_bytes);
		mlx5dv_set_data_seg(data, data_length, lkey, (uintptr_t) address);
	}
	printf("%u ", ds);
	print_hex(buffer, total);
	printf("\n");
}

static void cqe(void)
{
	unsigned int op_own, byte_cnt, wqe_counter, hds_ip_ext, l4_hdr_type_etc, syndrome, vendor_synd;
	if (scanf("%u %u %u %u %u %u %u", &op_own, &byte_cnt, &wqe_counter, &hds_ip_ext, &l4_hdr_type_etc, &syndrome,
		  &vendor_synd) != 7) {
		fprintf(stderr, "bad cqe line\n");
		exit(2);
	}
	union {
		struct mlx5_cqe64 cqe;
		struct mlx5_err_cqe err;
	} entry;
	memset(&entry, 0, sizeof(entry));
	entry.cqe.hds_ip_ext = (uint8_t) hds_ip_ext;
	entry.cqe.l4_hdr_type_etc = (uint8_t) l4_hdr_type_etc;
	entry.cqe.byte_cnt = htobe32(byte_cnt);
	entry.cqe.wqe_counter = htobe16((uint16_t) wqe_counter);
	entry.err.syndrome = (uint8_t) syndrome;
	entry.err.vendor_err_synd = (uint8_t) vendor_synd;
	entry.cqe.op_own = (uint8_t) op_own;
	print_hex((const uint8_t *) &entry.cqe, sizeof(entry.cqe));
	printf(" %u %u %u\n", mlx5dv_get_cqe_owner(&entry.cqe), mlx5dv_get_cqe_opcode(&entry.cqe), mlx5dv_get_cqe_format(&entry.cqe));
}

/* The Ethernet spec every rule starts with: the destination MAC and the EtherType, both matched exactly. */
static void eth_spec(struct ibv_flow_spec_eth *eth, const char *mac_hex, uint16_t ether_type)
{
	eth->type = IBV_FLOW_SPEC_ETH;
	eth->size = sizeof(*eth);
	parse_hex(mac_hex, eth->val.dst_mac, 6);
	memset(eth->mask.dst_mac, 0xff, 6);
	eth->val.ether_type = htons(ether_type);
	eth->mask.ether_type = 0xffff;
}

static void flow(void)
{
	char mac_hex[32];
	unsigned int ip, port, tcp, ibv_port;
	if (scanf("%31s %x %u %u %u", mac_hex, &ip, &port, &tcp, &ibv_port) != 5) {
		fprintf(stderr, "bad flow line\n");
		exit(2);
	}
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv4 ipv4;
		struct ibv_flow_spec_tcp_udp l4;
	} rule;
	_Static_assert(sizeof(rule) == sizeof(struct ibv_flow_attr) + sizeof(struct ibv_flow_spec_eth) + sizeof(struct ibv_flow_spec_ipv4)
		       + sizeof(struct ibv_flow_spec_tcp_udp), "specs follow the attribute without padding");
	memset(&rule, 0, sizeof(rule));
	rule.attr.type = IBV_FLOW_ATTR_NORMAL;
	rule.attr.size = sizeof(rule);
	rule.attr.priority = 0;
	rule.attr.num_of_specs = 3;
	rule.attr.port = (uint8_t) ibv_port;
	eth_spec(&rule.eth, mac_hex, 0x0800);
	rule.ipv4.type = IBV_FLOW_SPEC_IPV4;
	rule.ipv4.size = sizeof(rule.ipv4);
	rule.ipv4.val.dst_ip = htonl(ip);
	rule.ipv4.mask.dst_ip = 0xffffffff;
	rule.l4.type = tcp ? IBV_FLOW_SPEC_TCP : IBV_FLOW_SPEC_UDP;
	rule.l4.size = sizeof(rule.l4);
	rule.l4.val.dst_port = htons((uint16_t) port);
	rule.l4.mask.dst_port = 0xffff;
	print_hex((const uint8_t *) &rule, sizeof(rule));
	printf("\n");
}

static void flow6(void)
{
	char mac_hex[32], ip_hex[64];
	unsigned int dont_trap, ibv_port;
	if (scanf("%31s %63s %u %u", mac_hex, ip_hex, &dont_trap, &ibv_port) != 4) {
		fprintf(stderr, "bad flow6 line\n");
		exit(2);
	}
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv6 ipv6;
	} rule;
	_Static_assert(sizeof(rule) == sizeof(struct ibv_flow_attr) + sizeof(struct ibv_flow_spec_eth) + sizeof(struct ibv_flow_spec_ipv6),
		       "specs follow the attribute without padding");
	memset(&rule, 0, sizeof(rule));
	rule.attr.type = IBV_FLOW_ATTR_NORMAL;
	rule.attr.size = sizeof(rule);
	rule.attr.num_of_specs = 2;
	rule.attr.port = (uint8_t) ibv_port;
	rule.attr.flags = dont_trap ? IBV_FLOW_ATTR_FLAGS_DONT_TRAP : 0;
	eth_spec(&rule.eth, mac_hex, 0x86dd);
	rule.ipv6.type = IBV_FLOW_SPEC_IPV6;
	rule.ipv6.size = sizeof(rule.ipv6);
	parse_hex(ip_hex, rule.ipv6.val.dst_ip, 16);
	memset(rule.ipv6.mask.dst_ip, 0xff, 16);
	print_hex((const uint8_t *) &rule, sizeof(rule));
	printf("\n");
}

int main(void)
{
	char kind[16];
	while (scanf("%15s", kind) == 1) {
		if (strcmp(kind, "wqe") == 0)
			wqe();
		else if (strcmp(kind, "cqe") == 0)
			cqe();
		else if (strcmp(kind, "flow") == 0)
			flow();
		else if (strcmp(kind, "flow6") == 0)
			flow6();
		else {
			fprintf(stderr, "unknown request %s\n", kind);
			return 2;
		}
	}
	return 0;
}
