package dev.tern.script;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code assert} of a packetdrill Python block ({@code %{ ... }%}), the subset Tern reads without running
 * Python: an expression over TCP_INFO fields ({@code tcpi_*}, {@link LinuxTcpInfo}), numbers and packetdrill's names
 * ({@code TCP_CA_Recovery}, {@code TCPI_OPT_SACK}, ...), with comparisons ({@code == != < <= > >=}, chained as
 * Python chains them: {@code 5000 <= tcpi_rtt <= 20000}), {@code &} and {@code |} on bits, {@code not},
 * {@code and}, {@code or} and parentheses, with Python's precedence; optionally followed by Python's failure message
 * ({@code , tcpi_snd_cwnd}), which is kept as written and never evaluated. Packetdrill runs a block with the TCP_INFO
 * of the socket under test taken at the block's time; the runner evaluates it then.
 *
 * @param line       the line of the block the statement is on
 * @param text       the statement as written, for messages
 * @param expression what must be true
 */
record TcpInfoAssert(int line, String text, Expression expression) {
    /** The TCP_INFO fields Tern has, with Linux's units (docs/SCRIPTS.md, getsockopt TCP_INFO). */
    static final List<String> FIELDS = LinuxTcpInfo.FIELDS;

    /** Linux's value of tcpi_snd_ssthresh before the first loss (its TCP_INFINITE_SSTHRESH, include/net/tcp.h). */
    static final long INFINITE_SSTHRESH = LinuxTcpInfo.INFINITE_SSTHRESH;

    /** The names a block may use for numbers. */
    static final Map<String, Long> CONSTANTS = LinuxTcpInfo.CONSTANTS;

    /** A part of an expression; a truth is 1 or 0, as Python's bool is an int. */
    sealed interface Expression {
        long evaluate(ToLongFunction<String> fields);

        /** As written, for messages. */
        String text();

        /** The fields it reads, in order, for messages. */
        default void fields(Set<String> into) {
        }
    }

    /** A field ({@code name} not null) or a number. */
    record Term(String name, long value, String text) implements Expression {
        @Override
        public long evaluate(ToLongFunction<String> fields) {
            return name == null ? value : fields.applyAsLong(name);
        }

        @Override
        public void fields(Set<String> into) {
            if (name != null) {
                into.add(name);
            }
        }
    }

    /** {@code left OPERATOR right}: a comparison or a bit operation. */
    record Binary(Expression left, String operator, Expression right) implements Expression {
        @Override
        public long evaluate(ToLongFunction<String> fields) {
            final long a = left.evaluate(fields);
            final long b = right.evaluate(fields);
            return switch (operator) {
                case "==" -> a == b ? 1 : 0;
                case "!=" -> a != b ? 1 : 0;
                case "<" -> a < b ? 1 : 0;
                case "<=" -> a <= b ? 1 : 0;
                case ">" -> a > b ? 1 : 0;
                case ">=" -> a >= b ? 1 : 0;
                case "&" -> a & b;
                case "|" -> a | b;
                default -> throw new IllegalStateException("the parser lets only these operators through");
            };
        }

        @Override
        public String text() {
            return left.text() + " " + operator + " " + right.text();
        }

        @Override
        public void fields(Set<String> into) {
            left.fields(into);
            right.fields(into);
        }
    }

    /** {@code and} (all parts true) or {@code or} (any part true) of two or more parts; a chain is an {@code and}. */
    record Logical(boolean all, List<Expression> parts, String text) implements Expression {
        @Override
        public long evaluate(ToLongFunction<String> fields) {
            for (Expression part : parts) {
                if ((part.evaluate(fields) != 0) != all) {
                    return all ? 0 : 1;
                }
            }
            return all ? 1 : 0;
        }

        @Override
        public void fields(Set<String> into) {
            parts.forEach(p -> p.fields(into));
        }
    }

    /** {@code not part}. */
    record Not(Expression part) implements Expression {
        @Override
        public long evaluate(ToLongFunction<String> fields) {
            return part.evaluate(fields) == 0 ? 1 : 0;
        }

        @Override
        public String text() {
            return "not " + part.text();
        }

        @Override
        public void fields(Set<String> into) {
            part.fields(into);
        }
    }

    /** {@code (part)}. */
    record Parenthesized(Expression part) implements Expression {
        @Override
        public long evaluate(ToLongFunction<String> fields) {
            return part.evaluate(fields);
        }

        @Override
        public String text() {
            return "(" + part.text() + ")";
        }

        @Override
        public void fields(Set<String> into) {
            part.fields(into);
        }
    }

    private static final Pattern TOKEN = Pattern.compile("\\s*(0x[0-9a-fA-F]+|\\d+|[A-Za-z_][A-Za-z0-9_]*|<=|>=|==|!="
        + "|<|>|\\S)");
    private static final List<String> COMPARISONS = List.of("==", "!=", "<", "<=", ">", ">=");

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
            String text = withoutComment(lines[i]);
            // Python's explicit line joining: a line ending in a backslash goes on on the next (it counts as the
            // line it starts on).
            while (text.stripTrailing().endsWith("\\") && i + 1 < lines.length) {
                final String joined = text.stripTrailing();
                text = joined.substring(0, joined.length() - 1) + " " + withoutComment(lines[++i]);
            }
            for (String statement : splitBalanced(file, line, text, ';')) {
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
        final Parser parser = new Parser(file, line, statement, tokens, names);
        final Expression expression = parser.or();
        if (parser.at < tokens.size()) {
            throw unsupported(file, line, statement, "'" + tokens.get(parser.at) + "' where an operator or the end "
                + "was expected");
        }
        return new TcpInfoAssert(line, statement, expression);
    }

    /**
     * Python's precedence, lowest first: {@code or}, {@code and}, {@code not}, comparisons (chained), {@code |},
     * {@code &}, then a field, number, name or parenthesized expression.
     */
    private static final class Parser {
        private final String file;
        private final int line;
        private final String statement;
        private final List<String> tokens;
        /** The numbers a name stands for: {@link #CONSTANTS} and the script's system's state names. */
        private final Map<String, Long> names;
        private int at;

        Parser(String file, int line, String statement, List<String> tokens, Map<String, Long> names) {
            this.file = file;
            this.line = line;
            this.statement = statement;
            this.tokens = tokens;
            this.names = names;
        }

        private boolean next(String token) {
            if (at < tokens.size() && tokens.get(at).equals(token)) {
                at++;
                return true;
            }
            return false;
        }

        Expression or() {
            return logical(false);
        }

        private Expression logical(boolean all) {
            final int first = at;
            final List<Expression> parts = new ArrayList<>();
            parts.add(all ? not() : logical(true));
            while (next(all ? "and" : "or")) {
                parts.add(all ? not() : logical(true));
            }
            return parts.size() == 1 ? parts.getFirst()
                : new Logical(all, List.copyOf(parts), String.join(" ", tokens.subList(first, at)));
        }

        private Expression not() {
            return next("not") ? new Not(not()) : comparison();
        }

        private Expression comparison() {
            final int first = at;
            Expression left = bits("|");
            final List<Expression> links = new ArrayList<>();
            while (at < tokens.size() && COMPARISONS.contains(tokens.get(at))) {
                final String operator = tokens.get(at++);
                final Expression right = bits("|");
                links.add(new Binary(left, operator, right));
                left = right;
            }
            if (links.isEmpty()) {
                return left;
            }
            return links.size() == 1 ? links.getFirst()
                : new Logical(true, List.copyOf(links), String.join(" ", tokens.subList(first, at)));
        }

        private Expression bits(String operator) {
            Expression left = operator.equals("|") ? bits("&") : primary();
            while (next(operator)) {
                left = new Binary(left, operator, operator.equals("|") ? bits("&") : primary());
            }
            return left;
        }

        private Expression primary() {
            if (at >= tokens.size()) {
                throw unsupported(file, line, statement, "the expression ends where a field or number was expected");
            }
            final String token = tokens.get(at++);
            if (token.equals("(")) {
                final Expression inside = or();
                if (!next(")")) {
                    throw unsupported(file, line, statement, "a '(' is not closed");
                }
                return new Parenthesized(inside);
            }
            if (token.startsWith("tcpi_")) {
                if (!FIELDS.contains(token)) {
                    throw new ScriptException(file, line, "TCP_INFO field '" + token + "' is not supported in a "
                        + "Python block (supported: " + String.join(", ", FIELDS) + ")");
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
            throw unsupported(file, line, statement, "'" + token + "' is neither a TCP_INFO field Tern has, a number "
                + "nor one of " + String.join(", ", new java.util.TreeSet<>(names.keySet())));
        }
    }

    private static ScriptException unsupported(String file, int line, String statement, String reason) {
        return new ScriptException(file, line, "Python block: '" + statement + "' is not supported: " + reason + "; "
            + "Tern does not run Python, it reads assert statements comparing TCP_INFO fields with numbers "
            + "(docs/SCRIPTS.md)");
    }

    /**
     * Null when the assert holds, else why not: the first part of a top-level {@code and} (or of a chain) that
     * fails, with the values of the fields it reads.
     */
    String failure(ToLongFunction<String> fields) {
        if (expression.evaluate(fields) != 0) {
            return null;
        }
        Expression failed = expression;
        if (expression instanceof Logical l && l.all()) {
            for (Expression part : l.parts()) {
                if (part.evaluate(fields) == 0) {
                    failed = part;
                    break;
                }
            }
        }
        final Set<String> names = new LinkedHashSet<>();
        failed.fields(names);
        final StringBuilder values = new StringBuilder();
        for (String name : names) {
            values.append(values.isEmpty() ? "" : ", ").append(name).append(" is ").append(fields.applyAsLong(name));
        }
        return "'" + text + "' failed: " + failed.text() + " does not hold" + (values.isEmpty() ? "" : " (" + values
            + ")");
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
