package dev.tern.core.testing;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The module ladder of docs/DESIGN.md as data, for the guard-rail tests: {@code ModuleLadderTest} (core) checks every
 * module's pom against it, {@code ArchitectureTest} (conformance) checks every class. A module is named as its Maven
 * artifact without the {@code tern-} prefix and its code lives in package {@code dev.tern.<module>}.
 *
 * <pre>
 *   core &lt;- ethernet &lt;- arp &lt;- ipv4 &lt;- {igmp, udp, tcp} &lt;- stack &lt;- {nio, script} &lt;- {cli, conformance}
 *                ^-- ipv6 &lt;----------------- {udp, tcp} &lt;---------- stack
 *                                                               stack &lt;- lab &lt;- cli
 *                ^-- {rawqp, afpacket, afxdp} (Links) &lt;---------------------------- nio
 *   ^-- testkit (the namespace harness) &lt;-- conformance; afpacket's tests (test scope only)
 * </pre>
 *
 * <p>A module may use a module it reaches by following the edges below down (the closure), nothing else: never a
 * higher rung, never a sibling (udp and tcp, rawqp, afpacket and afxdp, nio, script and lab, cli and conformance), and
 * testkit never in main code of a module that has it only for its tests ({@code TEST_ONLY}).
 */
public final class ModuleLadder {
    /** Each module with the modules it is built directly on. The order is bottom-up. */
    private static final Map<String, List<String>> EDGES = new LinkedHashMap<>();

    static {
        EDGES.put("core", List.of());
        EDGES.put("testkit", List.of("core"));
        EDGES.put("ethernet", List.of("core"));
        EDGES.put("arp", List.of("ethernet"));
        EDGES.put("ipv4", List.of("arp"));
        EDGES.put("igmp", List.of("ipv4"));
        EDGES.put("udp", List.of("ipv4", "ipv6"));
        EDGES.put("tcp", List.of("ipv4", "ipv6"));
        EDGES.put("rawqp", List.of("ethernet"));
        EDGES.put("afpacket", List.of("ethernet"));
        EDGES.put("afxdp", List.of("ethernet"));
        EDGES.put("ipv6", List.of("ethernet"));
        EDGES.put("stack", List.of("igmp", "udp", "tcp", "ipv6"));
        EDGES.put("nio", List.of("stack", "afpacket", "afxdp", "rawqp"));
        EDGES.put("script", List.of("stack"));
        EDGES.put("lab", List.of("stack"));
        EDGES.put("cli", List.of("nio", "script", "lab"));
        EDGES.put("conformance", List.of("nio", "script", "testkit"));
    }

    /**
     * A deliberate exception, test scope only: conformance's interop tests start the {@code tern} command in a
     * child JVM by class name ({@code dev.tern.cli.Tern}) with their own class path, so cli's classes must be on it;
     * no conformance class, main or test, may refer to a cli class (ArchitectureTest checks that).
     */
    private static final Map<String, Set<String>> TEST_RUNTIME_ONLY = Map.of("conformance", Set.of("cli"));

    /**
     * Edges for a module's tests only, test scope: afpacket's veth tests build their namespaces with testkit's harness
     * ({@code dev.tern.testkit.netns}), which its main code may not use. testkit is built on core alone, so this makes
     * no cycle; conformance, whose benchmarks (main code) use the harness too, has testkit on its rung instead.
     * ArchitectureTest checks that no main class of afpacket refers to testkit (afpacket's test classes are not on
     * its class path).
     */
    private static final Map<String, Set<String>> TEST_ONLY = Map.of("afpacket", Set.of("testkit"));

    private ModuleLadder() {
    }

    /** Every module, bottom-up. */
    public static List<String> modules() {
        return List.copyOf(EDGES.keySet());
    }

    /** The modules {@code module} may depend on in its main code: everything below it on the ladder. */
    public static Set<String> below(String module) {
        return below(EDGES, module);
    }

    /** {@link #below} for any ladder given as direct edges (tests of the rule use deliberately wrong ladders). */
    public static Set<String> below(Map<String, List<String>> edges, String module) {
        if (!edges.containsKey(module)) {
            throw new IllegalArgumentException("module " + module + " is not on the ladder (docs/DESIGN.md)");
        }
        final Set<String> reached = new LinkedHashSet<>();
        final List<String> work = new java.util.ArrayList<>(edges.get(module));
        while (!work.isEmpty()) {
            final String next = work.removeLast();
            if (reached.add(next)) {
                work.addAll(edges.getOrDefault(next, List.of()));
            }
        }
        return Collections.unmodifiableSet(reached);
    }

    /** Whether {@code module}'s pom may declare a dependency on {@code target} in Maven scope {@code scope}. */
    public static boolean allowed(String module, String target, String scope) {
        if (below(module).contains(target)) {
            return true;
        }
        return "test".equals(scope) && (TEST_RUNTIME_ONLY.getOrDefault(module, Set.of()).contains(target)
            || TEST_ONLY.getOrDefault(module, Set.of()).contains(target));
    }

    /** The ladder's direct edges (read-only). */
    public static Map<String, List<String>> edges() {
        return Collections.unmodifiableMap(EDGES);
    }
}
