package dev.tern.afxdp;

import dev.tern.afxdp.sys.Sys;
import dev.tern.afxdp.sys.SysException;
import dev.tern.afxdp.sys.XdpAbi;
import dev.tern.core.sys.Libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * The XDP program that hands Tern its own frames and the kernel everything else, with its XSKMAP, loaded and attached
 * through the {@code bpf()} system call (no libbpf, no clang: see docs/DESIGN.md, "The AF_XDP link").
 *
 * <p>The program, in pseudo-C (the instructions are {@link #program}):
 * <pre>
 *   if (frame shorter than 14 bytes) return XDP_PASS;
 *   if (dst MAC is 01:00:xx:xx:xx:xx but not 01:00:5e:00:00:01)          // a multicast group
 *       return lookup(&amp;groups, dst MAC bytes 2..5) ? redirect : XDP_PASS;
 *   if (dst MAC != Tern's MAC &amp;&amp; dst MAC != ff:ff:ff:ff:ff:ff) return XDP_PASS;
 *   if (ethertype == 0x0800 &amp;&amp; frame &gt;= 34 bytes &amp;&amp; IPv4 dst == Tern's address) goto redirect;
 *   if (ethertype == 0x0806 &amp;&amp; frame &gt;= 42 bytes &amp;&amp; ARP target IP == Tern's address) goto redirect;
 *   return XDP_PASS;
 * redirect:
 *   return bpf_redirect_map(&amp;xsks, ctx-&gt;rx_queue_index, XDP_PASS);   // no socket on that queue: the kernel's
 * </pre>
 * Checking the IPv4 address as well as the MAC is what lets Tern share the interface's own MAC with the kernel:
 * the kernel keeps every frame for its own addresses. Multicast: frames for a group MAC Tern joined
 * ({@link #addGroup}, a hash map the program looks up) go to Tern, and no longer to the kernel on this interface; the
 * all-systems group (224.0.0.1, whose IGMP queries the kernel needs) always stays the kernel's.
 *
 * <p>Attachment is a BPF link ({@code BPF_LINK_CREATE}, kernel 5.9+): the kernel detaches the program when the last
 * descriptor of the link closes, so a Tern process that exits or is killed leaves nothing attached. Native (driver)
 * mode is tried first, then generic (SKB) mode; {@link #nativeMode()} says which held.
 *
 * <p>Cold path; owned by the link that created it.
 */
final class XdpSteering implements AutoCloseable {
    private static final int LOG_SIZE = 64 * 1024;

    private final MemorySegment callState;
    private int mapFd = -1;
    private int groupsFd = -1;
    private MemorySegment groupKey;
    private MemorySegment groupValue;
    private MemorySegment groupAttr;
    private int programFd = -1;
    private int linkFd = -1;
    private boolean nativeMode;

    private XdpSteering(MemorySegment callState) {
        this.callState = callState;
    }

    /**
     * Creates the XSKMAP, loads the program for {@code mac}/{@code ipv4}, puts {@code socketFd} at {@code queue} and
     * attaches to {@code ifindex} (native mode first unless {@code forceGeneric}).
     *
     * @throws AfXdpOpenException with a one-line reason
     */
    static XdpSteering attach(Arena arena, MemorySegment callState, String interfaceName, int ifindex, int queue, int socketFd,
                              long mac, int ipv4, boolean forceGeneric) {
        final XdpSteering steering = new XdpSteering(callState);
        try {
            steering.createMap(arena, queue + 1);
            steering.createGroups(arena);
            steering.load(arena, mac, ipv4);
            steering.insert(arena, queue, socketFd);
            steering.attachTo(arena, interfaceName, ifindex, forceGeneric);
            return steering;
        } catch (RuntimeException e) {
            steering.close();
            throw e;
        }
    }

    boolean nativeMode() {
        return nativeMode;
    }

    private void createMap(Arena arena, int entries) {
        final MemorySegment attr = arena.allocate(XdpAbi.BPF_ATTR_SIZE, 8);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_TYPE, XdpAbi.BPF_MAP_TYPE_XSKMAP);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_KEY_SIZE, 4);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_VALUE_SIZE, 4);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_MAX_ENTRIES, entries);
        name(attr, XdpAbi.MAP_CREATE_NAME, "tern_xsks");
        final int fd = Sys.bpf(callState, XdpAbi.BPF_MAP_CREATE, attr, XdpAbi.BPF_ATTR_SIZE);
        if (fd < 0) {
            throw AfXdpOpenException.bpf("bpf(BPF_MAP_CREATE, XSKMAP)", Libc.errno(callState));
        }
        mapFd = fd;
    }

    /** The multicast groups steered to Tern: a hash map keyed by bytes 2..5 of the group MAC. */
    private void createGroups(Arena arena) {
        final MemorySegment attr = arena.allocate(XdpAbi.BPF_ATTR_SIZE, 8);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_TYPE, XdpAbi.BPF_MAP_TYPE_HASH);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_KEY_SIZE, 4);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_VALUE_SIZE, 4);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_MAX_ENTRIES, MAX_GROUPS);
        name(attr, XdpAbi.MAP_CREATE_NAME, "tern_groups");
        final int fd = Sys.bpf(callState, XdpAbi.BPF_MAP_CREATE, attr, XdpAbi.BPF_ATTR_SIZE);
        if (fd < 0) {
            throw AfXdpOpenException.bpf("bpf(BPF_MAP_CREATE, HASH)", Libc.errno(callState));
        }
        groupsFd = fd;
        groupKey = arena.allocate(ValueLayout.JAVA_INT);
        groupValue = arena.allocateFrom(ValueLayout.JAVA_INT, 1);
        groupAttr = arena.allocate(XdpAbi.BPF_ATTR_SIZE, 8);
    }

    /** The most multicast groups steered at once. */
    static final int MAX_GROUPS = 256;

    /** The map key of a group MAC: its bytes 2..5, as the program loads them (a little-endian u32). */
    static int groupKey(long groupMac) {
        return Integer.reverseBytes((int) groupMac);
    }

    /** Steers frames for {@code groupMac} to Tern; returns 0 or the errno of the refusal (map full). Cold path. */
    int addGroup(long groupMac) {
        return groupCommand(XdpAbi.BPF_MAP_UPDATE_ELEM, groupMac);
    }

    /** Gives frames for {@code groupMac} back to the kernel. Cold path. */
    int removeGroup(long groupMac) {
        return groupCommand(XdpAbi.BPF_MAP_DELETE_ELEM, groupMac);
    }

    private int groupCommand(int command, long groupMac) {
        groupKey.set(ValueLayout.JAVA_INT, 0, groupKey(groupMac));
        groupAttr.fill((byte) 0);
        groupAttr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_UPDATE_FD, groupsFd);
        groupAttr.set(ValueLayout.JAVA_LONG, XdpAbi.MAP_UPDATE_KEY, groupKey.address());
        if (command == XdpAbi.BPF_MAP_UPDATE_ELEM) {
            groupAttr.set(ValueLayout.JAVA_LONG, XdpAbi.MAP_UPDATE_VALUE, groupValue.address());
        }
        return Sys.bpf(callState, command, groupAttr, XdpAbi.BPF_ATTR_SIZE) < 0 ? Libc.errno(callState) : 0;
    }

    private void load(Arena arena, long mac, int ipv4) {
        final long[] instructions = program(mapFd, groupsFd, mac, ipv4);
        final MemorySegment insns = arena.allocate(8L * instructions.length, 8);
        for (int i = 0; i < instructions.length; i++) {
            insns.set(ValueLayout.JAVA_LONG, 8L * i, instructions[i]);
        }
        final MemorySegment license = arena.allocateFrom("Dual BSD/GPL");
        final MemorySegment log = arena.allocate(LOG_SIZE);
        final MemorySegment attr = arena.allocate(XdpAbi.BPF_ATTR_SIZE, 8);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.PROG_LOAD_TYPE, XdpAbi.BPF_PROG_TYPE_XDP);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.PROG_LOAD_INSN_CNT, instructions.length);
        attr.set(ValueLayout.JAVA_LONG, XdpAbi.PROG_LOAD_INSNS, insns.address());
        attr.set(ValueLayout.JAVA_LONG, XdpAbi.PROG_LOAD_LICENSE, license.address());
        attr.set(ValueLayout.JAVA_INT, XdpAbi.PROG_LOAD_LOG_LEVEL, 1);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.PROG_LOAD_LOG_SIZE, LOG_SIZE);
        attr.set(ValueLayout.JAVA_LONG, XdpAbi.PROG_LOAD_LOG_BUF, log.address());
        attr.set(ValueLayout.JAVA_INT, XdpAbi.PROG_LOAD_EXPECTED_ATTACH_TYPE, XdpAbi.BPF_XDP);
        name(attr, XdpAbi.PROG_LOAD_NAME, "tern_steer");
        final int fd = Sys.bpf(callState, XdpAbi.BPF_PROG_LOAD, attr, XdpAbi.BPF_ATTR_SIZE);
        if (fd < 0) {
            final int errno = Libc.errno(callState);
            final String verifier = log.getString(0).strip();
            final String last = verifier.isEmpty() ? "" : " (verifier: " + verifier.substring(verifier.lastIndexOf('\n') + 1) + ")";
            throw new AfXdpOpenException(AfXdpOpenException.bpf("bpf(BPF_PROG_LOAD, XDP)", errno).getMessage() + last);
        }
        programFd = fd;
    }

    private void insert(Arena arena, int queue, int socketFd) {
        final MemorySegment key = arena.allocateFrom(ValueLayout.JAVA_INT, queue);
        final MemorySegment value = arena.allocateFrom(ValueLayout.JAVA_INT, socketFd);
        final MemorySegment attr = arena.allocate(XdpAbi.BPF_ATTR_SIZE, 8);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_UPDATE_FD, mapFd);
        attr.set(ValueLayout.JAVA_LONG, XdpAbi.MAP_UPDATE_KEY, key.address());
        attr.set(ValueLayout.JAVA_LONG, XdpAbi.MAP_UPDATE_VALUE, value.address());
        if (Sys.bpf(callState, XdpAbi.BPF_MAP_UPDATE_ELEM, attr, XdpAbi.BPF_ATTR_SIZE) < 0) {
            throw AfXdpOpenException.bpf("bpf(BPF_MAP_UPDATE_ELEM, XSKMAP[" + queue + "])", Libc.errno(callState));
        }
    }

    private void attachTo(Arena arena, String interfaceName, int ifindex, boolean forceGeneric) {
        int nativeErrno = 0;
        if (!forceGeneric) {
            final int fd = linkCreate(arena, ifindex, XdpAbi.XDP_FLAGS_DRV_MODE);
            if (fd >= 0) {
                linkFd = fd;
                nativeMode = true;
                return;
            }
            nativeErrno = Libc.errno(callState);
            if (nativeErrno == 16 || nativeErrno == 17 || nativeErrno == 1 || nativeErrno == 13) {
                throw AfXdpOpenException.attach(interfaceName, nativeErrno);
            }
        }
        final int fd = linkCreate(arena, ifindex, XdpAbi.XDP_FLAGS_SKB_MODE);
        if (fd < 0) {
            throw AfXdpOpenException.attach(interfaceName, Libc.errno(callState));
        }
        linkFd = fd;
        nativeMode = false;
    }

    private int linkCreate(Arena arena, int ifindex, int flags) {
        final MemorySegment attr = arena.allocate(XdpAbi.BPF_ATTR_SIZE, 8);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.LINK_CREATE_PROG_FD, programFd);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.LINK_CREATE_IFINDEX, ifindex);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.LINK_CREATE_ATTACH_TYPE, XdpAbi.BPF_XDP);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.LINK_CREATE_FLAGS, flags);
        return Sys.bpf(callState, XdpAbi.BPF_LINK_CREATE, attr, XdpAbi.BPF_ATTR_SIZE);
    }

    private static void name(MemorySegment attr, long offset, String name) {
        final byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(bytes, 0, attr, ValueLayout.JAVA_BYTE, offset, Math.min(bytes.length, 15));
    }

    /** Detaches (closing the BPF link) and frees the program and map. */
    @Override
    public void close() {
        try (Arena scratch = Arena.ofConfined()) {
            final MemorySegment state = Libc.newCallState(scratch);
            if (linkFd >= 0) {
                Libc.close(state, linkFd);
                linkFd = -1;
            }
            if (programFd >= 0) {
                Libc.close(state, programFd);
                programFd = -1;
            }
            if (mapFd >= 0) {
                Libc.close(state, mapFd);
                mapFd = -1;
            }
            if (groupsFd >= 0) {
                Libc.close(state, groupsFd);
                groupsFd = -1;
            }
        }
    }

    // ---- the program ----

    private static final int R0 = 0;
    private static final int R1 = 1;
    private static final int R2 = 2;
    private static final int R3 = 3;
    private static final int R4 = 4;
    private static final int R5 = 5;
    private static final int R6 = 6;
    private static final int R10 = 10;
    /** Bytes 2..5 of 01:00:5e:00:00:01 (all systems, 224.0.0.1), as the program loads them. */
    private static final int ALL_SYSTEMS_KEY = Integer.reverseBytes(0x5E00_0001);

    /**
     * The steering program's instructions (each {@code struct bpf_insn} as a little-endian u64: code, dst|src&lt;&lt;4,
     * off, imm) for an XSKMAP {@code mapFd}, the group map {@code groupsFd}, Tern's {@code mac} (packed as
     * {@code MacAddress}) and {@code ipv4}.
     */
    static long[] program(int mapFd, int groupsFd, long mac, int ipv4) {
        final Assembler a = new Assembler();
        // Frame bytes are read as little-endian words, so each constant is the wire bytes in little-endian order.
        final int macLow = Integer.reverseBytes((int) (mac >>> 16));
        final int macHigh = Short.toUnsignedInt(Short.reverseBytes((short) mac));
        final int addressLe = Integer.reverseBytes(ipv4);

        a.movX(R6, R1);                                                  // the context, kept across calls
        a.ldxW(R2, R1, XdpAbi.XDP_MD_DATA);
        a.ldxW(R3, R1, XdpAbi.XDP_MD_DATA_END);
        a.movX(R4, R2).addK(R4, 14).jgtX(R4, R3, "pass");
        a.ldxW(R5, R2, 0).jne32K(R5, macLow, "broadcast");
        a.ldxH(R5, R2, 4).jne32K(R5, macHigh, "broadcast").ja("ethertype");
        a.label("broadcast");
        a.ldxW(R5, R2, 0).jne32K(R5, -1, "multicast");
        a.ldxH(R5, R2, 4).jne32K(R5, 0xFFFF, "pass").ja("ethertype");
        a.label("multicast");
        a.ldxH(R5, R2, 0).jne32K(R5, 0x0001, "pass");                   // 01:00:..
        a.ldxW(R5, R2, 2).jeq32K(R5, ALL_SYSTEMS_KEY, "pass");
        a.stxW(R10, R5, -4);
        a.movX(R2, R10).addK(R2, -4);
        a.ldMapFd(R1, groupsFd);
        a.call(XdpAbi.BPF_FUNC_MAP_LOOKUP_ELEM);
        a.jeqK(R0, 0, "pass").ja("redirect");
        a.label("ethertype");
        a.ldxH(R5, R2, 12).jne32K(R5, 0x0008, "arp");                  // 0x0800 on the wire
        a.movX(R4, R2).addK(R4, 34).jgtX(R4, R3, "pass");
        a.ldxW(R5, R2, 30).jne32K(R5, addressLe, "pass").ja("redirect"); // IPv4 destination
        a.label("arp");
        a.jne32K(R5, 0x0608, "pass");                                    // 0x0806 on the wire
        a.movX(R4, R2).addK(R4, 42).jgtX(R4, R3, "pass");
        a.ldxW(R5, R2, 38).jne32K(R5, addressLe, "pass");                // ARP target protocol address
        a.label("redirect");
        a.ldxW(R2, R6, XdpAbi.XDP_MD_RX_QUEUE_INDEX);
        a.ldMapFd(R1, mapFd);
        a.movK(R3, XdpAbi.XDP_PASS);                                     // no socket on the queue: pass
        a.call(XdpAbi.BPF_FUNC_REDIRECT_MAP).exit();
        a.label("pass");
        a.movK(R0, XdpAbi.XDP_PASS).exit();
        return a.assemble();
    }

    /** A minimal eBPF assembler with forward labels; cold path. */
    static final class Assembler {
        private final java.util.List<long[]> code = new java.util.ArrayList<>();   // {insn, or -1-labelIndex for jumps}
        private final java.util.List<String> jumpTargets = new java.util.ArrayList<>();
        private final java.util.Map<String, Integer> labels = new java.util.HashMap<>();

        private Assembler emit(int opcode, int dst, int src, int offset, int immediate) {
            code.add(new long[] {encode(opcode, dst, src, offset, immediate), 0});
            jumpTargets.add(null);
            return this;
        }

        private Assembler jump(int opcode, int dst, int src, int immediate, String target) {
            emit(opcode, dst, src, 0, immediate);
            jumpTargets.set(jumpTargets.size() - 1, target);
            return this;
        }

        static long encode(int opcode, int dst, int src, int offset, int immediate) {
            return (opcode & 0xFFL) | (long) ((dst & 0xF) | (src & 0xF) << 4) << 8 | (offset & 0xFFFFL) << 16
                | (immediate & 0xFFFF_FFFFL) << 32;
        }

        Assembler label(String name) {
            labels.put(name, code.size());
            return this;
        }

        Assembler ldxW(int dst, int src, int offset) {
            return emit(0x61, dst, src, offset, 0);                      // BPF_LDX | BPF_MEM | BPF_W
        }

        Assembler ldxH(int dst, int src, int offset) {
            return emit(0x69, dst, src, offset, 0);                      // BPF_LDX | BPF_MEM | BPF_H
        }

        Assembler movX(int dst, int src) {
            return emit(0xbf, dst, src, 0, 0);                           // BPF_ALU64 | BPF_MOV | BPF_X
        }

        Assembler movK(int dst, int immediate) {
            return emit(0xb7, dst, 0, 0, immediate);                     // BPF_ALU64 | BPF_MOV | BPF_K
        }

        Assembler addK(int dst, int immediate) {
            return emit(0x07, dst, 0, 0, immediate);                     // BPF_ALU64 | BPF_ADD | BPF_K
        }

        Assembler jgtX(int dst, int src, String target) {
            return jump(0x2d, dst, src, 0, target);                      // BPF_JMP | BPF_JGT | BPF_X
        }

        Assembler jeq32K(int dst, int immediate, String target) {
            return jump(0x16, dst, 0, immediate, target);                // BPF_JMP32 | BPF_JEQ | BPF_K
        }

        Assembler jeqK(int dst, int immediate, String target) {
            return jump(0x15, dst, 0, immediate, target);                // BPF_JMP | BPF_JEQ | BPF_K
        }

        Assembler stxW(int dst, int src, int offset) {
            return emit(0x63, dst, src, offset, 0);                      // BPF_STX | BPF_MEM | BPF_W
        }

        Assembler jne32K(int dst, int immediate, String target) {
            return jump(0x56, dst, 0, immediate, target);                // BPF_JMP32 | BPF_JNE | BPF_K
        }

        Assembler ja(String target) {
            return jump(0x05, 0, 0, 0, target);                          // BPF_JMP | BPF_JA
        }

        Assembler ldMapFd(int dst, int fd) {
            emit(0x18, dst, XdpAbi.BPF_PSEUDO_MAP_FD, 0, fd);            // BPF_LD | BPF_DW | BPF_IMM, two slots
            return emit(0, 0, 0, 0, 0);
        }

        Assembler call(int helper) {
            return emit(0x85, 0, 0, 0, helper);                          // BPF_JMP | BPF_CALL
        }

        Assembler exit() {
            return emit(0x95, 0, 0, 0, 0);                               // BPF_JMP | BPF_EXIT
        }

        long[] assemble() {
            final long[] out = new long[code.size()];
            for (int pc = 0; pc < out.length; pc++) {
                long insn = code.get(pc)[0];
                final String target = jumpTargets.get(pc);
                if (target != null) {
                    final Integer at = labels.get(target);
                    if (at == null) {
                        throw new IllegalStateException("no label " + target);
                    }
                    final int offset = at - (pc + 1);
                    insn = (insn & ~(0xFFFFL << 16)) | (offset & 0xFFFFL) << 16;
                }
                out[pc] = insn;
            }
            return out;
        }
    }
}
