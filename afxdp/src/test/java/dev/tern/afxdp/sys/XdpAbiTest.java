package dev.tern.afxdp.sys;

import dev.tern.core.testing.ExternalTools;
import org.junit.jupiter.api.Test;

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
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hand-written AF_XDP and bpf() bindings against the installed kernel headers: every {@link CAbi} constant of
 * {@link XdpAbi} is printed by a C program gcc compiles against {@code <linux/if_xdp.h>}, {@code <linux/bpf.h>} and
 * {@code <linux/if_link.h>}, and must equal the Java value. An unknown name fails the compile, which fails the test.
 */
class XdpAbiTest {
    record Entry(String name, String expression, long value) {
    }

    static List<Entry> entries() throws IllegalAccessException {
        final List<Entry> entries = new ArrayList<>();
        for (Field field : XdpAbi.class.getDeclaredFields()) {
            final CAbi abi = field.getAnnotation(CAbi.class);
            if (abi != null && Modifier.isStatic(field.getModifiers())) {
                final long value = field.getType() == int.class ? field.getInt(null) : field.getLong(null);
                entries.add(new Entry(field.getName(), abi.value(), value));
            }
        }
        return entries;
    }

    /**
     * Multi-buffer's two flags came with Linux 6.6's {@code <linux/if_xdp.h>}; older installed headers (Debian 12's
     * linux-libc-dev is 6.1) lack them. Each is compared where the headers define it, and said to be unchecked where
     * they do not; the MTU 9000 interop test ({@code AfXdpInteropTest}) is where the running kernel takes them.
     */
    static final Set<String> SINCE_LINUX_6_6 = Set.of("XDP_USE_SG", "XDP_PKT_CONTD");

    @Test
    void everyConstantOffsetAndSizeEqualsWhatGccPrintsFromTheKernelHeaders() throws Exception {
        ExternalTools.require("gcc", "gcc");
        final List<Entry> entries = entries();
        final Map<String, Long> printed = print(entries);
        final List<String> mismatches = new ArrayList<>();
        final List<String> unchecked = new ArrayList<>();
        for (Entry entry : entries) {
            final Long c = printed.get(entry.name());
            if (c == null && SINCE_LINUX_6_6.contains(entry.name())) {
                unchecked.add(entry.name());
            } else if (c == null || c != entry.value()) {
                mismatches.add(entry.name() + ": Java " + entry.value() + ", C " + c + "  (" + entry.expression() + ")");
            }
        }
        assertEquals(List.of(), mismatches, "XdpAbi differs from the installed kernel headers");
        System.out.printf("AF_XDP ABI: %d values compared with gcc%s%n", entries.size() - unchecked.size(),
            unchecked.isEmpty() ? "" : "; not in the installed headers (older than Linux 6.6), so unchecked: " + unchecked);
        assertTrue(entries.size() >= 100, "only " + entries.size() + " entries");
    }

    @Test
    void everyStructTheLinkPassesToTheKernelHasItsSizeChecked() throws Exception {
        final List<String> sizes = entries().stream().map(Entry::expression).filter(e -> e.startsWith("sizeof")).toList();
        for (String struct : List.of("xdp_umem_reg", "sockaddr_xdp", "xdp_mmap_offsets", "xdp_ring_offset", "xdp_desc",
            "xdp_statistics", "pollfd", "ifreq")) {
            assertTrue(sizes.contains("sizeof(struct " + struct + ")"), struct + " has no size check");
        }
    }

    private static Map<String, Long> print(List<Entry> entries) throws IOException {
        final StringBuilder c = new StringBuilder("""
            #include <stddef.h>
            #include <stdio.h>
            #include <poll.h>
            #include <sys/mman.h>
            #include <sys/eventfd.h>
            #include <sys/socket.h>
            #include <sys/syscall.h>
            #include <net/if.h>
            #include <sys/ioctl.h>
            #include <linux/if_xdp.h>
            #include <linux/if_link.h>
            #include <linux/bpf.h>

            int main(void) {
            """);
        for (Entry e : entries) {
            final boolean guarded = SINCE_LINUX_6_6.contains(e.name());
            if (guarded) {
                c.append("#ifdef ").append(e.expression()).append('\n');
            }
            c.append("    printf(\"%s %lld\\n\", \"").append(e.name()).append("\", (long long) (").append(e.expression()).append("));\n");
            if (guarded) {
                c.append("#endif\n");
            }
        }
        c.append("    return 0;\n}\n");
        final Path dir = Files.createDirectories(Path.of("target", "c-programs"));
        final Path source = dir.resolve("xdp_abi.c");
        final Path executable = dir.resolve("xdp_abi");
        Files.writeString(source, c);
        ExternalTools.run(Duration.ofSeconds(60), "gcc", "-std=gnu11", "-Wall", "-o", executable.toString(), source.toString())
            .orFail("gcc " + source);
        final String out = ExternalTools.run(Duration.ofSeconds(10), executable.toAbsolutePath().toString()).orFail("xdp_abi").stdout();
        final Map<String, Long> values = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                final String[] parts = line.trim().split(" ");
                values.put(parts[0], Long.parseLong(parts[1]));
            }
        }
        return values;
    }
}
