package dev.tern.core.architecture;

import dev.tern.core.testing.ModuleLadder;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Guard rail (rules a later change could break silently fail a test instead): every module's pom declares only dependencies the module ladder allows ({@link ModuleLadder}),
 * so a sideways or upward dependency fails the first module's build, before any code can use it. Runs in core because
 * core is built first by every build; it reads the poms of the whole tree. Class-level dependencies are checked by
 * conformance's {@code ArchitectureTest}.
 */
class ModuleLadderTest {
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();

    @Test
    void everyModuleOfTheBuildIsOnTheLadder() throws Exception {
        final List<String> built = new ArrayList<>();
        for (Element module : children(parse(Files.readAllBytes(ROOT.resolve("pom.xml"))).getDocumentElement(), "modules", "module")) {
            built.add(module.getTextContent().trim());
        }
        assertEquals(ModuleLadder.modules().stream().sorted().toList(), built.stream().sorted().toList(),
            "the root pom's modules and the ladder in ModuleLadder (and docs/DESIGN.md) must name the same modules");
    }

    @Test
    void everyPomDependsOnlyDownTheLadder() throws Exception {
        final List<String> violations = new ArrayList<>();
        for (String module : ModuleLadder.modules()) {
            violations.addAll(violations(module, parse(Files.readAllBytes(ROOT.resolve(module).resolve("pom.xml")))));
        }
        assertEquals(List.of(), violations);
    }

    /**
     * The rule can fail: the slip that was once found (conformance compiled against cli), a sideways udp -> tcp, stack
     * looking up at the script runner that was moved out of it, script using its sibling nio, afpacket's main code
     * using the namespace harness its tests use, and the harness using a link module.
     */
    @Test
    void rejectsSidewaysAndUpwardDependencies() throws Exception {
        assertEquals(List.of("conformance -> tern-cli (scope compile)"),
            violations("conformance", pom(dependency("tern-stack", null), dependency("tern-cli", null))));
        assertEquals(List.of("udp -> tern-tcp (scope compile)"), violations("udp", pom(dependency("tern-tcp", null))));
        assertEquals(List.of("ipv4 -> tern-stack (scope test)"),
            violations("ipv4", pom(dependency("tern-arp", null), dependency("tern-stack", "test"))));
        assertEquals(List.of("stack -> tern-script (scope test)"),
            violations("stack", pom(dependency("tern-tcp", null), dependency("tern-script", "test"))));
        assertEquals(List.of("script -> tern-nio (scope compile)"),
            violations("script", pom(dependency("tern-stack", null), dependency("tern-nio", null))));
        assertEquals(List.of(), violations("cli", pom(dependency("tern-script", null), dependency("tern-nio", null))));
        assertEquals(List.of("afpacket -> tern-testkit (scope compile)"),
            violations("afpacket", pom(dependency("tern-testkit", null))));
        assertEquals(List.of(), violations("afpacket", pom(dependency("tern-testkit", "test"))));
        assertEquals(List.of("testkit -> tern-afpacket (scope test)"),
            violations("testkit", pom(dependency("tern-core", null), dependency("tern-afpacket", "test"))));
        assertEquals(List.of(), violations("conformance", pom(dependency("tern-cli", "test"))));
        assertTrue(violations("core", pom(dependency("tern-ethernet", "runtime"))).size() == 1);
    }

    /** Each dependency of {@code pom} on a Tern module that the ladder does not allow, as "module -> artifact (scope)". */
    static List<String> violations(String module, Document pom) {
        final List<String> found = new ArrayList<>();
        for (Element dependency : children(pom.getDocumentElement(), "dependencies", "dependency")) {
            final String group = text(dependency, "groupId");
            final String artifact = text(dependency, "artifactId");
            if (!("dev.tern".equals(group) || "${project.groupId}".equals(group)) || !artifact.startsWith("tern-")) {
                continue;
            }
            final String scope = text(dependency, "scope") == null ? "compile" : text(dependency, "scope");
            if (!ModuleLadder.allowed(module, artifact.substring("tern-".length()), scope)) {
                found.add(module + " -> " + artifact + " (scope " + scope + ")");
            }
        }
        return found;
    }

    private static List<Element> children(Element project, String list, String item) {
        final List<Element> found = new ArrayList<>();
        for (Node n = project.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(list)) {
                for (Node m = e.getFirstChild(); m != null; m = m.getNextSibling()) {
                    if (m instanceof Element f && f.getTagName().equals(item)) {
                        found.add(f);
                    }
                }
            }
        }
        return found;
    }

    private static String text(Element parent, String tag) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(tag)) {
                return e.getTextContent().trim();
            }
        }
        return null;
    }

    private static Document parse(byte[] xml) throws Exception {
        final DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        try (InputStream in = new ByteArrayInputStream(xml)) {
            return factory.newDocumentBuilder().parse(in);
        }
    }

    private static Document pom(String... dependencies) throws Exception {
        return parse(("<project><artifactId>fixture</artifactId><dependencies>" + String.join("", dependencies)
            + "</dependencies></project>").getBytes(StandardCharsets.UTF_8));
    }

    private static String dependency(String artifact, String scope) {
        return "<dependency><groupId>dev.tern</groupId><artifactId>" + artifact + "</artifactId>"
            + (scope == null ? "" : "<scope>" + scope + "</scope>") + "</dependency>";
    }
}
