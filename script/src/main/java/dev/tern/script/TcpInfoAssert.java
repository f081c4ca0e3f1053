package dev.tern.script;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code assert} of a packetdrill Python block ({@code %{ ... }%}), the subset Tern reads without running
 * Python: comparisons of TCP_INFO fields ({@code tcpi_*}) and numbers with {@code == != < <= > >=}, chained as Python
 * chains them ({@code 5000 <= tcpi_rtt <= 20000}) and joined with {@code and}, optionally followed by Python's
 * failure message ({@code , tcpi_snd_cwnd}), which is kept as written and never evaluated. Packetdrill runs a block
 * with the TCP_INFO of the socket under test taken at the block's time; the runner evaluates it then.
 *
 * @param line        the line of the block the statement is on
 * @param text        the statement as written, for messages
 * @param comparisons every comparison, all of which must hold
 */
record TcpInfoAssert(int line, String text, List<Comparison> comparisons) {
    /** The TCP_INFO fields Tern has, with Linux's units (docs/SCRIPTS.md, getsockopt TCP_INFO). */
    static final List<String> FIELDS = List.of("tcpi_state", "tcpi_rto", "tcpi_rtt", "tcpi_snd_mss", "tcpi_snd_cwnd",
        "tcpi_snd_ssthresh", "tcpi_total_retrans");

    /** Linux's value of tcpi_snd_ssthresh before the first loss (its TCP_INFINITE_SSTHRESH, include/net/tcp.h). */
    static final long INFINITE_SSTHRESH = 0x7fffffffL;

    /**
     * The names packetdrill defines for a block (its code.c) that mean something for Tern's fields besides the
     * states, which are the system's ({@link ScriptDialect#stateNumbers()}).
     */
    static final Map<String, Long> CONSTANTS = Map.of("TCP_INFINITE_SSTHRESH", INFINITE_SSTHRESH);

    /** A field ({@code name} not null) or a number. */
    record Term(String name, long value, String text) {
        long evaluate(ToLongFunction<String> fields) {
            return name == null ? value : fields.applyAsLong(name);
        }
    }

    /** {@code left OPERATOR right}. */
    record Comparison(Term left, String operator, Term right) {
        boolean holds(ToLongFunction<String> fields) {
            final long a = left.evaluate(fields);
            final long b = right.evaluate(fields);
            return switch (operator) {
                case "==" -> a == b;
                case "!=" -> a != b;
                case "<" -> a < b;
                case "<=" -> a <= b;
                case ">" -> a > b;
                case ">=" -> a >= b;
                default -> throw new IllegalStateException("the parser lets only comparisons through");
            };
        }
    }

    private static final Pattern TOKEN = Pattern.compile("\\s*(0x[0-9a-fA-F]+|\\d+|[A-Za-z_][A-Za-z0-9_]*|<=|>=|==|!="
        + "|<|>|\\S)");
    private static final List<String> OPERATORS = List.of("==", "!=", "<", "<=", ">", ">=");

    /**
     * The statements of a block's body (what lies between {@code %{} and {@code }%}, which starts on
     * {@code firstLine}); anything but an assert of the subset is rejected with its line and the reason. TCP states are
     * named as {@code states} says (the script's system's names).
     */
    static List<TcpInfoAssert> parseBlock(String file, int firstLine, String body, Map<String, Long> states) {
        final Map<String, Long> names = new java.util.HashMap<>(CONSTANTS);
        names.putAll(states);
        final List<TcpInfoAssert> asserts = new ArrayList<>();
        final String[] lines = body.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            final int line = firstLine + i;
            for (String statement : splitBalanced(file, line, withoutComment(lines[i]), ';')) {
                if (!statement.isBlank()) {
                    asserts.add(parse(file, line, statement.strip(), names));
                }
            }
        }
        if (asserts.isEmpty()) {
            throw new ScriptException(file, firstLine, "an empty Python block (%{ }%)");
        }
        return asserts;
    }

    private static TcpInfoAssert parse(String file, int line, String statement, Map<String, Long> names) {
        if (!statement.startsWith("assert ")) {
            throw unsupported(file, line, statement, "only assert statements are read");
        }
        // Python's "assert EXPRESSION, MESSAGE": the message is printed on failure only; Tern keeps it as text.
        final List<String> parts = splitBalanced(file, line, statement.substring("assert ".length()), ',');
        if (parts.size() > 2) {
            throw unsupported(file, line, statement, "an assert takes an expression and at most one message");
        }
        final List<String> tokens = new ArrayList<>();
        final Matcher m = TOKEN.matcher(parts.getFirst());
        while (m.lookingAt()) {
            tokens.add(m.group(1));
            m.region(m.end(), parts.getFirst().length());
        }
        if (!parts.getFirst().substring(m.regionStart()).isBlank()) {
            throw unsupported(file, line, statement, "unexpected '" + parts.getFirst().substring(m.regionStart()).strip()
                + "'");
        }
        final List<Comparison> comparisons = new ArrayList<>();
        int i = 0;
        while (true) {
            Term left = term(file, line, statement, tokens, i++, names);
            if (i >= tokens.size() || !OPERATORS.contains(tokens.get(i))) {
                throw unsupported(file, line, statement, "each part of the expression compares a field with "
                    + "==, !=, <, <=, > or >=");
            }
            while (i < tokens.size() && OPERATORS.contains(tokens.get(i))) {
                final String operator = tokens.get(i++);
                final Term right = term(file, line, statement, tokens, i++, names);
                comparisons.add(new Comparison(left, operator, right));
                left = right;
            }
            if (i >= tokens.size()) {
                break;
            }
            if (!tokens.get(i++).equals("and")) {
                throw unsupported(file, line, statement, "'" + tokens.get(i - 1) + "' where 'and' or the end was "
                    + "expected (only 'and' joins comparisons)");
            }
        }
        return new TcpInfoAssert(line, statement, List.copyOf(comparisons));
    }

    private static Term term(String file, int line, String statement, List<String> tokens, int i,
                             Map<String, Long> names) {
        if (i >= tokens.size()) {
            throw unsupported(file, line, statement, "the expression ends where a field or number was expected");
        }
        final String token = tokens.get(i);
        if (token.startsWith("tcpi_")) {
            if (!FIELDS.contains(token)) {
                throw new ScriptException(file, line, "TCP_INFO field '" + token + "' is not supported in a Python "
                    + "block (supported: " + String.join(", ", FIELDS) + ")");
            }
            return new Term(token, 0, token);
        }
        final Long constant = names.get(token);
        if (constant != null) {
            return new Term(null, constant, token);
        }
        if (Character.isDigit(token.charAt(0))) {
            return new Term(null, token.startsWith("0x") ? Long.parseLong(token.substring(2), 16)
                : Long.parseLong(token), token);
        }
        throw unsupported(file, line, statement, "'" + token + "' is neither a TCP_INFO field Tern has, a number nor "
            + "one of " + String.join(", ", new java.util.TreeSet<>(names.keySet())));
    }

    private static ScriptException unsupported(String file, int line, String statement, String reason) {
        return new ScriptException(file, line, "Python block: '" + statement + "' is not supported: " + reason + "; "
            + "Tern does not run Python, it reads assert statements comparing TCP_INFO fields with numbers "
            + "(docs/SCRIPTS.md)");
    }

    /** The first comparison that does not hold, with the fields' values, or null when the assert holds. */
    String failure(ToLongFunction<String> fields) {
        for (Comparison c : comparisons) {
            if (!c.holds(fields)) {
                final StringBuilder values = new StringBuilder();
                for (Term t : List.of(c.left(), c.right())) {
                    if (t.name() != null) {
                        values.append(values.isEmpty() ? "" : ", ").append(t.name()).append(" is ")
                            .append(t.evaluate(fields));
                    }
                }
                return "'" + text + "' failed: " + c.left().text() + " " + c.operator() + " " + c.right().text()
                    + " does not hold" + (values.isEmpty() ? "" : " (" + values + ")");
            }
        }
        return null;
    }

    private static List<String> splitBalanced(String file, int line, String text, char separator) {
        final List<String> parts = ScriptParser.splitOutside(text, separator);
        if (parts == null) {
            throw new ScriptException(file, line, "Python block: unbalanced brackets or quotes in '" + text.strip()
                + "'");
        }
        return parts;
    }

    /** A Python comment: {@code #} outside quotes, to the end of the line. */
    private static final Pattern COMMENT = Pattern.compile("^((?:[^'\"#]|'[^']*'|\"[^\"]*\")*)#.*$");

    /** The line without a Python comment. */
    private static String withoutComment(String line) {
        return COMMENT.matcher(line).replaceFirst("$1");
    }
}
