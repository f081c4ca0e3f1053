package dev.tern.afxdp;

import dev.tern.afxdp.sys.Sys;
import dev.tern.afxdp.sys.XdpAbi;
import dev.tern.core.sys.Libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * The XDP program that hands Tern its own frames and the kernel everything else, with its maps, loaded and attached
 * through the {@code bpf()} system call (no libbpf, no clang: see docs/DESIGN.md, "The AF_XDP link").
 *
 * <p>The program, in pseudo-C (the instructions are {@link #program}):
 * <pre>
 *   if (frame shorter than 14 bytes) return XDP_PASS;
 *   if (dst MAC is 33:33:xx:xx:xx:xx) {                                   // IPv6 multicast
 *       if (ethertype == 0x86dd &amp;&amp; frame &gt;= 78 &amp;&amp; next header == 58            // ICMPv6, no extension header
 *           &amp;&amp; (type == 135 || type == 136))                                  // ND: Tern's if about its address
 *           return lookup(&amp;addresses6, target) ? redirect : XDP_PASS;
 *       if (dst MAC is 33:33:ff:xx:xx:xx or 33:33:00:00:00:01) return XDP_PASS;  // solicited-node, all-nodes
 *       return lookup(&amp;groups, dst MAC bytes 2..5) ? redirect : XDP_PASS;      // a group Tern joined
 *   }
 *   if (dst MAC is 01:00:xx:xx:xx:xx but not 01:00:5e:00:00:01)          // a multicast group
 *       return lookup(&amp;groups, dst MAC bytes 2..5) ? redirect : XDP_PASS;
 *   if (dst MAC != Tern's MAC &amp;&amp; dst MAC != ff:ff:ff:ff:ff:ff) return XDP_PASS;
 *   if (ethertype == 0x0800 &amp;&amp; frame &gt;= 34 bytes &amp;&amp; IPv4 dst == Tern's address) {
 *       if (shed_flags == 0) goto redirect;                                 // a one-entry array, read in place
 *       if (protocol != TCP || fragment offset != 0) goto redirect;
 *       tcp = 14 + 4 * IHL;                                                 // IPv4 options included
 *       if (frame &lt; tcp + 14 bytes) goto redirect;
 *       if ((tcp flags &amp; (SYN|RST|ACK)) != SYN) goto redirect;
 *       if ((shed_flags &amp; BY_SOURCE) &amp;&amp; lookup(&amp;shed_sources, IPv4 src)) goto drop;
 *       if (!(shed_flags &amp; AT_RANDOM)) goto redirect;
 *       if ((bpf_get_prandom_u32() &amp; 7) == 0) goto redirect;              // one in eight goes on to Tern
 *   drop:
 *       __sync_fetch_and_add(&amp;shed_count, 1);
 *       return XDP_DROP;
 *   }
 *   if (ethertype == 0x0806 &amp;&amp; frame &gt;= 42 bytes &amp;&amp; ARP target IP == Tern's address) goto redirect;
 *   if (ethertype == 0x86dd &amp;&amp; frame &gt;= 54 bytes &amp;&amp; lookup(&amp;addresses6, IPv6 dst)) {
 *       if (!(shed_flags &amp; AT_RANDOM)) goto redirect;                   // IPv6 sources are never in the map
 *       if (frame &lt; 68 bytes || next header != TCP) goto redirect;      // an extension header: not looked at
 *       if ((tcp flags &amp; (SYN|RST|ACK)) != SYN) goto redirect;
 *       if ((bpf_get_prandom_u32() &amp; 7) == 0) goto redirect;
 *       goto drop;
 *   }
 *   return XDP_PASS;
 * redirect:
 *   return bpf_redirect_map(&amp;xsks, ctx-&gt;rx_queue_index, XDP_PASS);   // no socket on that queue: the kernel's
 * </pre>
 * Checking the IPv4 address as well as the MAC is what lets Tern share the interface's own MAC with the kernel:
 * the kernel keeps every frame for its own addresses. Multicast: frames for a group MAC Tern joined
 * ({@link #addGroup}, a hash map the program looks up) go to Tern, and no longer to the kernel on this interface; the
 * all-systems group (224.0.0.1, whose IGMP queries the kernel needs) always stays the kernel's.
 *
 * <p>IPv6: a hash map of Tern's addresses ({@link #addAddress6}, 16-byte keys in wire order, the link-local one
 * among them, tentative ones too, since duplicate address detection needs their solicitations and advertisements)
 * decides, looked up with the key read in place from the frame. Unicast to one of them goes to Tern. Of IPv6
 * multicast, only neighbour solicitations and advertisements whose target is one of them do (RFC 4861 §4.3, §4.4:
 * resolution of Tern's addresses, and DAD's probes and defences, sent to solicited-node groups and all-nodes that
 * the kernel's addresses share); everything else multicast (router advertisements, MLD queries, the kernel's own
 * ND) stays the kernel's, as all-systems does for IPv4, except the groups Tern joined for its applications, in the
 * group map as IPv4's are (keyed alike by MAC bytes 2..5: an IPv6 group whose MAC ends like that of an IPv4 group
 * Tern joined, 33:33:5e:..., comes to Tern as well, which drops it). An ND message after an extension header is not looked at:
 * RFC 6980 forbids fragmented ND, and nothing else puts one there.
 *
 * <p>Load shedding (a SYN flood at the link's full rate must not starve established connections; {@link AfXdpLink#shedUnsolicitedSyns}): while the link sets the flag
 * ({@link #shedSyns}, one {@code BPF_MAP_UPDATE_ELEM} per change), seven in eight connection-opening SYNs for Tern are
 * dropped before they take a slot of the RX ring, as AF_PACKET's classic BPF filter does, and counted in a second
 * one-entry array ({@link #synsShed}). Both arrays are read and added to in place through their value's address
 * ({@code BPF_PSEUDO_MAP_VALUE}, Linux 5.2+), so the unicast path pays one load for the flag and no helper call while
 * shedding is off. The TCP header is found through the IPv4 header length, options included, like the classic
 * filter: a flood that carried an IPv4 option would otherwise pass unshed. A header length under 5 words is the
 * stack's to count as malformed; the program may shed such a frame as it reads it, which loses nothing.
 * When a few sources carry the flood ({@link AfXdpLink#shedSynsFrom}) their addresses go in a hash map and the flag
 * gets its {@link #BY_SOURCE} bit: their SYNs are all dropped, and other sources' SYNs pass unless the random bit
 * ({@link #AT_RANDOM}) is on as well, as AF_PACKET's filter does it. The map lookup is paid only while that bit is on.
 * IPv6 SYNs to Tern's addresses (TCP in the fixed header) are shed by the random bit alone, seven in eight: the
 * source map and the stack's list of heavy sources are IPv4's.
 * The count is added to atomically, which keeps it exact whatever CPUs run the program; it is touched only by the
 * SYNs dropped, and in native mode one queue's frames are handled in its NAPI context on one CPU at a time, so the
 * cache line stays where it is. A per-CPU array would need a lookup call per drop and a sum over CPUs to read.
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
    private int shedFd = -1;
    private int shedCountFd = -1;
    private int shedSourcesFd = -1;
    private int addresses6Fd = -1;
    /** The shedding flag's bits now ({@link #AT_RANDOM}, {@link #BY_SOURCE}). */
    private int shedFlags;
    /** The sources in the map now, as their map keys. */
    private final int[] shedSourceKeys = new int[MAX_SHED_SOURCES];
    private int shedSourceCount;
    private MemorySegment mapKey;
    private MemorySegment mapKey6;
    private MemorySegment mapValue;
    private MemorySegment mapAttr;
    private int programFd = -1;
    private int linkFd = -1;
    private boolean nativeMode;

    private XdpSteering(MemorySegment callState) {
        this.callState = callState;
    }

    /**
     * Creates the XSKMAP, loads the program for {@code mac}/{@code ipv4}, puts {@code socketFd} at {@code queue} and
     * attaches to {@code ifindex} (native mode first unless {@code forceGeneric}). With {@code frags} the program is
     * loaded as one that takes multi-buffer frames ({@code BPF_F_XDP_HAS_FRAGS}): it reads only headers, which lie in
     * the first buffer, so nothing in it changes; the flag is what lets the kernel hand it frames longer than a page
     * (a veth refuses a program without it once the peer's MTU exceeds about 3,500 bytes).
     *
     * @throws AfXdpOpenException with a one-line reason
     */
    static XdpSteering attach(Arena arena, MemorySegment callState, String interfaceName, int ifindex, int queue, int socketFd,
                              long mac, int ipv4, boolean forceGeneric, boolean frags) {
        final XdpSteering steering = new XdpSteering(callState);
        try {
            steering.mapKey = arena.allocate(ValueLayout.JAVA_INT);
            steering.mapKey6 = arena.allocate(16, 8);
            steering.mapValue = arena.allocate(ValueLayout.JAVA_LONG);
            steering.mapAttr = arena.allocate(XdpAbi.BPF_ATTR_SIZE, 8);
            steering.mapFd = steering.createMap(arena, XdpAbi.BPF_MAP_TYPE_XSKMAP, 4, 4, queue + 1, "tern_xsks", "XSKMAP");
            steering.groupsFd = steering.createMap(arena, XdpAbi.BPF_MAP_TYPE_HASH, 4, 4, MAX_GROUPS, "tern_groups", "HASH");
            steering.shedFd = steering.createMap(arena, XdpAbi.BPF_MAP_TYPE_ARRAY, 4, 4, 1, "tern_shed", "ARRAY");
            steering.shedCountFd = steering.createMap(arena, XdpAbi.BPF_MAP_TYPE_ARRAY, 4, 8, 1, "tern_shed_count",
                "ARRAY");
            steering.shedSourcesFd = steering.createMap(arena, XdpAbi.BPF_MAP_TYPE_HASH, 4, 4, MAX_SHED_SOURCES,
                "tern_shed_src", "HASH");
            steering.addresses6Fd = steering.createMap(arena, XdpAbi.BPF_MAP_TYPE_HASH, 16, 4, MAX_ADDRESSES6,
                "tern_addr6", "HASH");
            steering.load(arena, mac, ipv4, frags);
            steering.insert(queue, socketFd);
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

    /**
     * A map (the XSKMAP: the socket per queue; hash maps with u32 keys: the multicast groups steered to Tern, keyed by
     * bytes 2..5 of the group MAC, and the sources whose SYNs are shed; one with 16-byte keys: Tern's IPv6 addresses;
     * one-entry arrays: the shedding flag and count); returns its descriptor.
     */
    private int createMap(Arena arena, int type, int keySize, int valueSize, int entries, String name,
                          String typeName) {
        final MemorySegment attr = arena.allocate(XdpAbi.BPF_ATTR_SIZE, 8);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_TYPE, type);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_KEY_SIZE, keySize);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_VALUE_SIZE, valueSize);
        attr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_CREATE_MAX_ENTRIES, entries);
        name(attr, XdpAbi.MAP_CREATE_NAME, name);
        final int fd = Sys.bpf(callState, XdpAbi.BPF_MAP_CREATE, attr, XdpAbi.BPF_ATTR_SIZE);
        if (fd < 0) {
            throw AfXdpOpenException.bpf("bpf(BPF_MAP_CREATE, " + typeName + ")", Libc.errno(callState));
        }
        return fd;
    }

    /** The most multicast groups steered at once. */
    static final int MAX_GROUPS = 256;

    /** The map key of a group MAC: its bytes 2..5, as the program loads them (a little-endian u32). */
    static int groupKey(long groupMac) {
        return Integer.reverseBytes((int) groupMac);
    }

    /** Steers frames for {@code groupMac} to Tern; returns 0 or the errno of the refusal (map full). Cold path. */
    int addGroup(long groupMac) {
        mapValue.set(ValueLayout.JAVA_INT, 0, 1);
        return mapCommand(XdpAbi.BPF_MAP_UPDATE_ELEM, groupsFd, groupKey(groupMac));
    }

    /** Gives frames for {@code groupMac} back to the kernel. Cold path. */
    int removeGroup(long groupMac) {
        return mapCommand(XdpAbi.BPF_MAP_DELETE_ELEM, groupsFd, groupKey(groupMac));
    }

    /** The most IPv6 addresses steered to Tern: the link-local one, the configured ones and SLAAC's, with room. */
    static final int MAX_ADDRESSES6 = 32;

    /**
     * Steers frames for the IPv6 address ({@code high}, {@code low}) to Tern, and neighbour discovery about it;
     * returns 0 or the errno of the refusal (map full). Cold path: one system call.
     */
    int addAddress6(long high, long low) {
        mapValue.set(ValueLayout.JAVA_INT, 0, 1);
        return address6Command(XdpAbi.BPF_MAP_UPDATE_ELEM, high, low);
    }

    /** Gives frames for the IPv6 address back to the kernel; 0 or the errno (ENOENT: it was not steered). */
    int removeAddress6(long high, long low) {
        return address6Command(XdpAbi.BPF_MAP_DELETE_ELEM, high, low);
    }

    private int address6Command(int command, long high, long low) {
        mapKey6.set(BIG_ENDIAN_LONG, 0, high);                                // wire order, as the program reads it
        mapKey6.set(BIG_ENDIAN_LONG, 8, low);
        return mapCommand(command, addresses6Fd, mapKey6);
    }

    private static final ValueLayout.OfLong BIG_ENDIAN_LONG =
        ValueLayout.JAVA_LONG.withOrder(java.nio.ByteOrder.BIG_ENDIAN);

    /** The most sources whose SYNs the program sheds at once ({@link #shedSynsFrom}). */
    static final int MAX_SHED_SOURCES = 64;
    /** The shedding flag's bit for seven in eight of every source's SYNs. */
    static final int AT_RANDOM = 1;
    /** The shedding flag's bit for every SYN of the sources in the map. */
    static final int BY_SOURCE = 2;

    /** The map key of an IPv4 address: its wire bytes, as the program stores them (a little-endian u32). */
    static int sourceKey(int ipv4) {
        return Integer.reverseBytes(ipv4);
    }

    /**
     * Sets ({@code on}) or clears the program's random shedding; returns 0 or the errno of the refusal. Takes effect
     * for the next frame the program sees. Cold path: one system call per change.
     */
    int shedSyns(boolean on) {
        return setShedFlags(on ? shedFlags | AT_RANDOM : shedFlags & ~AT_RANDOM);
    }

    /**
     * Sheds every SYN from the first {@code count} of {@code sources} (at most {@link #MAX_SHED_SOURCES}; 0 ends it);
     * returns 0 or the errno of the first refusal, after which the sources may be those before or a part of the new
     * ones, and the flag is as it was. Cold path: a system call per source added or removed, and one for the flag.
     */
    int shedSynsFrom(int[] sources, int count) {
        if (count == 0 && (shedFlags & BY_SOURCE) != 0) {
            final int errno = setShedFlags(shedFlags & ~BY_SOURCE);
            if (errno != 0) {
                return errno;
            }
        }
        for (int i = 0; i < shedSourceCount; i++) {
            if (!contains(sources, count, shedSourceKeys[i])) {
                final int errno = mapCommand(XdpAbi.BPF_MAP_DELETE_ELEM, shedSourcesFd, shedSourceKeys[i]);
                if (errno != 0 && errno != 2) {                              // ENOENT: gone already
                    return errno;
                }
            }
        }
        mapValue.set(ValueLayout.JAVA_INT, 0, 1);
        for (int i = 0; i < count; i++) {
            final int errno = mapCommand(XdpAbi.BPF_MAP_UPDATE_ELEM, shedSourcesFd, sourceKey(sources[i]));
            if (errno != 0) {
                shedSourceCount = 0;                                         // unknown now: each is deleted next time
                return errno;
            }
        }
        for (int i = 0; i < count; i++) {
            shedSourceKeys[i] = sourceKey(sources[i]);
        }
        shedSourceCount = count;
        return count > 0 ? setShedFlags(shedFlags | BY_SOURCE) : 0;
    }

    private static boolean contains(int[] sources, int count, int key) {
        for (int i = 0; i < count; i++) {
            if (sourceKey(sources[i]) == key) {
                return true;
            }
        }
        return false;
    }

    private int setShedFlags(int flags) {
        if (flags == shedFlags) {
            return 0;
        }
        mapValue.set(ValueLayout.JAVA_INT, 0, flags);
        final int errno = mapCommand(XdpAbi.BPF_MAP_UPDATE_ELEM, shedFd, 0);
        if (errno == 0) {
            shedFlags = flags;
        }
        return errno;
    }

    /**
     * The SYNs the program has dropped since it was loaded, or -1 when the kernel would not say. One system call, once
     * a second (the link's statistics), made without errno so that it allocates nothing.
     */
    long synsShed() {
        mapAttributes(XdpAbi.BPF_MAP_LOOKUP_ELEM, shedCountFd, 0);
        return Sys.bpfWithoutErrno(XdpAbi.BPF_MAP_LOOKUP_ELEM, mapAttr, XdpAbi.BPF_ATTR_SIZE) == 0
            ? mapValue.get(ValueLayout.JAVA_LONG, 0) : -1;
    }

    /**
     * One command on one entry of a map: the key is {@code key}; the value is read from {@link #mapValue} (update) or
     * written there (lookup). Returns 0 or the errno. Owned by the link's thread, like the scratch segments it uses.
     */
    private int mapCommand(int command, int fd, int key) {
        mapKey.set(ValueLayout.JAVA_INT, 0, key);
        return mapCommand(command, fd, mapKey);
    }

    /** {@link #mapCommand(int, int, int)} with the key already written in {@code key}. */
    private int mapCommand(int command, int fd, MemorySegment key) {
        mapAttributes(command, fd, key);
        return Sys.bpf(callState, command, mapAttr, XdpAbi.BPF_ATTR_SIZE) < 0 ? Libc.errno(callState) : 0;
    }

    private void mapAttributes(int command, int fd, int key) {
        mapKey.set(ValueLayout.JAVA_INT, 0, key);
        mapAttributes(command, fd, mapKey);
    }

    private void mapAttributes(int command, int fd, MemorySegment key) {
        mapAttr.fill((byte) 0);
        mapAttr.set(ValueLayout.JAVA_INT, XdpAbi.MAP_UPDATE_FD, fd);
        mapAttr.set(ValueLayout.JAVA_LONG, XdpAbi.MAP_UPDATE_KEY, key.address());
        if (command != XdpAbi.BPF_MAP_DELETE_ELEM) {
            mapAttr.set(ValueLayout.JAVA_LONG, XdpAbi.MAP_UPDATE_VALUE, mapValue.address());
        }
    }

    private void load(Arena arena, long mac, int ipv4, boolean frags) {
        final long[] instructions = program(new Maps(mapFd, groupsFd, shedFd, shedCountFd, shedSourcesFd, addresses6Fd), mac, ipv4);
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
        attr.set(ValueLayout.JAVA_INT, XdpAbi.PROG_LOAD_FLAGS, frags ? XdpAbi.BPF_F_XDP_HAS_FRAGS : 0);
        name(attr, XdpAbi.PROG_LOAD_NAME, "tern_steer");
        final int fd = Sys.bpf(callState, XdpAbi.BPF_PROG_LOAD, attr, XdpAbi.BPF_ATTR_SIZE);
        if (fd < 0) {
            final int errno = Libc.errno(callState);
            final String verifier = log.getString(0).strip();
            final String last = verifier.isEmpty() ? "" : " (verifier: " + verifier.substring(verifier.lastIndexOf('\n') + 1) + ")";
            throw new AfXdpOpenException(AfXdpOpenException.bpf("bpf(BPF_PROG_LOAD, XDP)", errno).getMessage() + last,
                errno);
        }
        programFd = fd;
    }

    private void insert(int queue, int socketFd) {
        mapValue.set(ValueLayout.JAVA_INT, 0, socketFd);
        final int errno = mapCommand(XdpAbi.BPF_MAP_UPDATE_ELEM, mapFd, queue);
        if (errno != 0) {
            throw AfXdpOpenException.bpf("bpf(BPF_MAP_UPDATE_ELEM, XSKMAP[" + queue + "])", errno);
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

    /**
     * Detaches (closing the BPF link) and closes the program and the maps; the kernel frees each map with the last
     * descriptor or program that holds it, so the shedding flag and count go with the program.
     */
    @Override
    public void close() {
        try (Arena scratch = Arena.ofConfined()) {
            final MemorySegment state = Libc.newCallState(scratch);
            linkFd = closeIfOpen(state, linkFd);
            programFd = closeIfOpen(state, programFd);
            mapFd = closeIfOpen(state, mapFd);
            groupsFd = closeIfOpen(state, groupsFd);
            shedFd = closeIfOpen(state, shedFd);
            shedCountFd = closeIfOpen(state, shedCountFd);
            shedSourcesFd = closeIfOpen(state, shedSourcesFd);
            addresses6Fd = closeIfOpen(state, addresses6Fd);
        }
    }

    private static int closeIfOpen(MemorySegment state, int fd) {
        if (fd >= 0) {
            Libc.close(state, fd);
        }
        return -1;
    }

    // ---- the program ----

    private static final int R0 = 0;
    private static final int R1 = 1;
    private static final int R2 = 2;
    private static final int R3 = 3;
    private static final int R4 = 4;
    private static final int R5 = 5;
    private static final int R6 = 6;
    private static final int R7 = 7;
    private static final int R10 = 10;
    /** Bytes 2..5 of 01:00:5e:00:00:01 (all systems, 224.0.0.1), as the program loads them. */
    private static final int ALL_SYSTEMS_KEY = Integer.reverseBytes(0x5E00_0001);
    /** Bytes 2..5 of 33:33:00:00:00:01 (all nodes, ff02::1), as the program loads them. */
    private static final int ALL_NODES_KEY = Integer.reverseBytes(0x0000_0001);
    /** While shedding, a SYN goes on to Tern when the random u32's low bits are all zero: one in eight, as on AF_PACKET. */
    static final int SHED_SAMPLE_MASK = 7;
    /** The 13 fragment-offset bits of IPv4 bytes 20..21 as a little-endian u16 load sees them. */
    private static final int FRAGMENT_OFFSET_LE = 0xFF1F;
    /** TCP's SYN, RST and ACK flags (RFC 9293 §3.1); a connection opens with SYN alone. */
    private static final int SYN_RST_ACK = 0x16;
    private static final int SYN = 0x02;
    /** Ethertype IPv6 (0x86dd) as a little-endian u16 load sees it. */
    private static final int IPV6_LE = 0xDD86;
    /** Where an IPv6 header's next header, destination, an ICMPv6 type and an ND message's target lie in a frame. */
    private static final int IPV6_NEXT_HEADER = 14 + 6;
    private static final int IPV6_DESTINATION = 14 + 24;
    private static final int ICMPV6_TYPE = 14 + 40;
    /** Where the TCP header of an IPv6 packet without extension headers starts. */
    private static final int IPV6_TCP = 14 + 40;
    private static final int ND_TARGET = ICMPV6_TYPE + 8;
    private static final int ICMPV6 = 58;
    private static final int NEIGHBOUR_SOLICITATION = 135;
    private static final int NEIGHBOUR_ADVERTISEMENT = 136;

    /** The descriptors of the program's maps. */
    record Maps(int xsks, int groups, int shedFlag, int shedCount, int shedSources, int addresses6) {
    }

    /**
     * The steering program's instructions (each {@code struct bpf_insn} as a little-endian u64: code, dst|src&lt;&lt;4,
     * off, imm) for its {@code maps}, Tern's {@code mac} (packed as {@code MacAddress}) and {@code ipv4}.
     */
    static long[] program(Maps maps, long mac, int ipv4) {
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
        a.ldxH(R5, R2, 0).jne32K(R5, 0x3333, "ipv4 multicast");         // 33:33:.. is IPv6's
        a.ldxH(R5, R2, 12).jne32K(R5, IPV6_LE, "ipv6 group");
        a.movX(R4, R2).addK(R4, ND_TARGET + 16).jgtX(R4, R3, "ipv6 group");
        a.ldxB(R5, R2, IPV6_NEXT_HEADER).jne32K(R5, ICMPV6, "ipv6 group");
        a.ldxB(R5, R2, ICMPV6_TYPE).jeq32K(R5, NEIGHBOUR_SOLICITATION, "nd target");
        a.jne32K(R5, NEIGHBOUR_ADVERTISEMENT, "ipv6 group");
        a.label("nd target");
        a.addK(R2, ND_TARGET);                                           // the key, read in place from the frame
        a.ldMapFd(R1, maps.addresses6());
        a.call(XdpAbi.BPF_FUNC_MAP_LOOKUP_ELEM);
        a.jeqK(R0, 0, "pass").ja("redirect");
        a.label("ipv6 group");
        a.ldxB(R5, R2, 2).jeq32K(R5, 0xFF, "pass");                     // 33:33:ff: solicited-node groups
        a.ldxW(R5, R2, 2).jeq32K(R5, ALL_NODES_KEY, "pass");
        a.ja("group");
        a.label("ipv4 multicast");
        a.jne32K(R5, 0x0001, "pass");                                    // 01:00:..
        a.ldxW(R5, R2, 2).jeq32K(R5, ALL_SYSTEMS_KEY, "pass");
        a.label("group");                                                // r5: MAC bytes 2..5, the map's key
        a.stxW(R10, R5, -4);
        a.movX(R2, R10).addK(R2, -4);
        a.ldMapFd(R1, maps.groups());
        a.call(XdpAbi.BPF_FUNC_MAP_LOOKUP_ELEM);
        a.jeqK(R0, 0, "pass").ja("redirect");
        a.label("ethertype");
        a.ldxH(R5, R2, 12).jne32K(R5, 0x0008, "arp");                  // 0x0800 on the wire
        a.movX(R4, R2).addK(R4, 34).jgtX(R4, R3, "pass");
        a.ldxW(R5, R2, 30).jne32K(R5, addressLe, "pass");                // IPv4 destination
        // Load shedding (see the class comment). Bytes up to 34 were checked against data_end above; the TCP flags
        // lie past a header length read from the frame, so they get their own check.
        a.ldMapValue(R4, maps.shedFlag());
        a.ldxW(R7, R4, 0).jeq32K(R7, 0, "redirect");                    // not shedding; r7 survives the calls
        a.ldxB(R5, R2, 23).jne32K(R5, 6, "redirect");                    // protocol: TCP
        a.ldxH(R5, R2, 20).jsetK(R5, FRAGMENT_OFFSET_LE, "redirect");    // a later fragment has no TCP header
        a.ldxW(R5, R2, 26).stxW(R10, R5, -4);                            // the source address: the map's key
        a.ldxB(R5, R2, 14).andK(R5, 0x0F).lshK(R5, 2);                   // IHL in bytes: 0..60, bounded for the verifier
        a.addX(R2, R5);                                                  // r2 + 14: the TCP header
        a.movX(R4, R2).addK(R4, 14 + 14).jgtX(R4, R3, "redirect");      // truncated: the stack counts it
        a.ldxB(R5, R2, 14 + 13).andK(R5, SYN_RST_ACK).jne32K(R5, SYN, "redirect");
        a.movX(R5, R7).andK(R5, BY_SOURCE).jeqK(R5, 0, "random");
        a.movX(R2, R10).addK(R2, -4);
        a.ldMapFd(R1, maps.shedSources());
        a.call(XdpAbi.BPF_FUNC_MAP_LOOKUP_ELEM);
        a.jneK(R0, 0, "drop");                                           // a listed source
        a.label("random");
        a.movX(R5, R7).andK(R5, AT_RANDOM).jeqK(R5, 0, "redirect");
        a.call(XdpAbi.BPF_FUNC_GET_PRANDOM_U32);
        a.andK(R0, SHED_SAMPLE_MASK).jeq32K(R0, 0, "redirect").ja("drop");
        a.label("arp");
        a.jne32K(R5, 0x0608, "ipv6");                                    // 0x0806 on the wire
        a.movX(R4, R2).addK(R4, 42).jgtX(R4, R3, "pass");
        a.ldxW(R5, R2, 38).jne32K(R5, addressLe, "pass").ja("redirect"); // ARP target protocol address
        a.label("ipv6");
        a.jne32K(R5, IPV6_LE, "pass");
        a.movX(R4, R2).addK(R4, IPV6_DESTINATION + 16).jgtX(R4, R3, "pass");
        a.addK(R2, IPV6_DESTINATION);
        a.ldMapFd(R1, maps.addresses6());
        a.call(XdpAbi.BPF_FUNC_MAP_LOOKUP_ELEM);
        a.jeqK(R0, 0, "pass");
        // IPv6 SYNs are shed at random only: the source map holds IPv4 addresses. The call took r2 and r3, so the
        // frame's bounds are read again from the context.
        a.ldMapValue(R4, maps.shedFlag());
        a.ldxW(R5, R4, 0).andK(R5, AT_RANDOM).jeqK(R5, 0, "redirect");
        a.ldxW(R2, R6, XdpAbi.XDP_MD_DATA);
        a.ldxW(R3, R6, XdpAbi.XDP_MD_DATA_END);
        a.movX(R4, R2).addK(R4, IPV6_TCP + 14).jgtX(R4, R3, "redirect");
        a.ldxB(R5, R2, IPV6_NEXT_HEADER).jne32K(R5, 6, "redirect");    // TCP in the fixed header
        a.ldxB(R5, R2, IPV6_TCP + 13).andK(R5, SYN_RST_ACK).jne32K(R5, SYN, "redirect");
        a.call(XdpAbi.BPF_FUNC_GET_PRANDOM_U32);
        a.andK(R0, SHED_SAMPLE_MASK).jeq32K(R0, 0, "redirect");
        a.label("drop");
        a.ldMapValue(R1, maps.shedCount());
        a.movK(R2, 1).atomicAddDw(R1, R2, 0);
        a.movK(R0, XdpAbi.XDP_DROP).exit();
        a.label("redirect");
        a.ldxW(R2, R6, XdpAbi.XDP_MD_RX_QUEUE_INDEX);
        a.ldMapFd(R1, maps.xsks());
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

        Assembler ldxB(int dst, int src, int offset) {
            return emit(0x71, dst, src, offset, 0);                      // BPF_LDX | BPF_MEM | BPF_B
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

        Assembler addX(int dst, int src) {
            return emit(0x0f, dst, src, 0, 0);                           // BPF_ALU64 | BPF_ADD | BPF_X
        }

        Assembler andK(int dst, int immediate) {
            return emit(0x57, dst, 0, 0, immediate);                     // BPF_ALU64 | BPF_AND | BPF_K
        }

        Assembler lshK(int dst, int immediate) {
            return emit(0x67, dst, 0, 0, immediate);                     // BPF_ALU64 | BPF_LSH | BPF_K
        }

        Assembler jsetK(int dst, int immediate, String target) {
            return jump(0x45, dst, 0, immediate, target);                // BPF_JMP | BPF_JSET | BPF_K
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

        Assembler jneK(int dst, int immediate, String target) {
            return jump(0x55, dst, 0, immediate, target);                // BPF_JMP | BPF_JNE | BPF_K
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

        /** dst = the address of a one-entry array map's value (the second slot's imm is the offset in it: 0). */
        Assembler ldMapValue(int dst, int fd) {
            emit(0x18, dst, XdpAbi.BPF_PSEUDO_MAP_VALUE, 0, fd);
            return emit(0, 0, 0, 0, 0);
        }

        /** *(u64 *)(dst + offset) += src, atomically. */
        Assembler atomicAddDw(int dst, int src, int offset) {
            return emit(0x03 | XdpAbi.BPF_ATOMIC | 0x18, dst, src, offset, XdpAbi.BPF_ADD); // BPF_STX | BPF_ATOMIC | BPF_DW
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
