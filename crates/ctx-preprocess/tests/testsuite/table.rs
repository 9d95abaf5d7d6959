//! One-line cases: input, predefined macros, output text and diagnostics.
//!
//! `pp!(name, [defs], input, output, "CODE@line:col ...")`; the diagnostics may be left out
//! when there are none.

use crate::check;

macro_rules! pp {
    ($name:ident, [$($def:expr),*], $input:expr, $out:expr) => {
        pp!($name, [$($def),*], $input, $out, "");
    };
    ($name:ident, [$($def:expr),*], $input:expr, $out:expr, $diags:expr) => {
        #[test]
        fn $name() {
            check(&[$($def),*], $input, $out, $diags);
        }
    };
}

// Every directive.
pp!(define_substitute, [], "@{define A, \"x\"}\n@{A}\n", "x\n");
pp!(define_no_comma, [], "@{define A \"x\"}@{A}", "x");
pp!(define_blanks, [], "@{ define\tA ,  \"x\" }@{ A }", "x");
pp!(define_empty, [], "@{define A}[@{A}]", "[]");
pp!(define_empty_comma, [], "@{define A,}[@{A}]", "[]");
pp!(define_redefine, [], "@{define A, \"1\"}@{define A, \"2\"}@{A}", "2");
pp!(define_over_predef, ["A=1"], "@{A}@{define A, \"2\"}@{A}", "12");
pp!(define_brace_in_value, [], "@{define A, \"x}y\"}@{A}", "x}y");
pp!(undef, ["A"], "@{undef A}@{ifdef A}yes@{else}no@{endif}", "no");
pp!(undef_undefined, [], "@{undef NOPE}x", "x");
pp!(undef_then_substitute, ["A=v"], "@{undef A}@{A}", "@{A}", "W_UNDEFINED_MACRO@1:11");
pp!(ifdef_true, ["A"], "@{ifdef A}y@{endif}", "y");
pp!(ifdef_false, [], "@{ifdef A}y@{endif}", "");
pp!(ifdef_empty_value_is_defined, ["A="], "@{ifdef A}y@{endif}", "y");
pp!(ifndef_true, [], "@{ifndef A}y@{endif}", "y");
pp!(ifndef_false, ["A"], "@{ifndef A}y@{endif}", "");
pp!(ifdef_else, [], "@{ifdef A}y@{else}n@{endif}", "n");
pp!(ifndef_else, [], "@{ifndef A}y@{else}n@{endif}", "y");
pp!(include_inline, [], "a @{include \"b.md\"} c", "a @{include \"b.md\"} c");
pp!(include_keeps_line, [], "x\n@{include \"p\"}\ny", "x\n@{include \"p\"}\ny");
pp!(include_colon_form, [], "@{include: \"p:2\"}", "@{include: \"p:2\"}");
pp!(substitute_keeps_line, ["A=v"], "x\n  @{A}  \nz", "x\n  v  \nz");
pp!(substitute_undefined, [], "a @{NOPE} b", "a @{NOPE} b", "W_UNDEFINED_MACRO@1:3");
pp!(substitute_twice, ["A=v"], "@{A}@{A}", "vv");
pp!(substitute_not_rescanned, [], "@{define A, \"@{B}\"}@{A}", "@{B}");

// Every operator, true and false, with a string and with a macro on the right.
pp!(is_true, ["M=fast"], r#"@{if M IS "fast"}y@{else}n@{endif}"#, "y");
pp!(is_false, ["M=fast"], r#"@{if M IS "slow"}y@{else}n@{endif}"#, "n");
pp!(is_not_substring, ["M=fast"], r#"@{if M IS "fas"}y@{else}n@{endif}"#, "n");
pp!(isnt_true, ["M=fast"], r#"@{if M ISNT "slow"}y@{else}n@{endif}"#, "y");
pp!(isnt_false, ["M=fast"], r#"@{if M ISNT "fast"}y@{else}n@{endif}"#, "n");
pp!(contains_true, ["M=fast"], r#"@{if M CONTAINS "as"}y@{else}n@{endif}"#, "y");
pp!(contains_false, ["M=fast"], r#"@{if M CONTAINS "sa"}y@{else}n@{endif}"#, "n");
pp!(contains_empty, ["M=fast"], r#"@{if M CONTAINS ""}y@{else}n@{endif}"#, "y");
pp!(doesnt_contain_true, ["M=fast"], r#"@{if M DOESNT_CONTAIN "z"}y@{else}n@{endif}"#, "y");
pp!(doesnt_contain_false, ["M=fast"], r#"@{if M DOESNT_CONTAIN "st"}y@{else}n@{endif}"#, "n");
pp!(matches_true, ["M=fast"], r#"@{if M MATCHES "^f.s"}y@{else}n@{endif}"#, "y");
pp!(matches_false, ["M=fast"], r#"@{if M MATCHES "^s"}y@{else}n@{endif}"#, "n");
pp!(matches_unanchored, ["M=fast"], r#"@{if M MATCHES "as"}y@{else}n@{endif}"#, "y");
pp!(matches_flags, ["M=fast"], r#"@{if M MATCHES "(?i)^FAST$"}y@{else}n@{endif}"#, "y");
pp!(matches_case_sensitive, ["M=fast"], r#"@{if M MATCHES "FAST"}y@{else}n@{endif}"#, "n");
pp!(doesnt_match_true, ["M=fast"], r#"@{if M DOESNT_MATCH "\\d"}y@{else}n@{endif}"#, "y");
pp!(doesnt_match_false, ["M=fast"], r#"@{if M DOESNT_MATCH "t$"}y@{else}n@{endif}"#, "n");
pp!(macro_is_true, ["M=fast", "O=fast"], "@{if M IS O}y@{else}n@{endif}", "y");
pp!(macro_is_false, ["M=fast", "O=slow"], "@{if M IS O}y@{else}n@{endif}", "n");
pp!(macro_isnt_true, ["M=fast", "O=slow"], "@{if M ISNT O}y@{else}n@{endif}", "y");
pp!(macro_isnt_false, ["M=a", "O=a"], "@{if M ISNT O}y@{else}n@{endif}", "n");
pp!(macro_contains_true, ["M=fast", "O=as"], "@{if M CONTAINS O}y@{else}n@{endif}", "y");
pp!(macro_contains_false, ["M=fast", "O=x"], "@{if M CONTAINS O}y@{else}n@{endif}", "n");
pp!(macro_doesnt_contain_true, ["M=a", "O=b"], "@{if M DOESNT_CONTAIN O}y@{else}n@{endif}", "y");
pp!(macro_doesnt_contain_false, ["M=ab", "O=b"], "@{if M DOESNT_CONTAIN O}y@{else}n@{endif}", "n");
pp!(macro_matches_true, ["M=fast", "P=^f"], "@{if M MATCHES P}y@{else}n@{endif}", "y");
pp!(macro_matches_false, ["M=fast", "P=^a"], "@{if M MATCHES P}y@{else}n@{endif}", "n");
pp!(macro_doesnt_match_true, ["M=fast", "P=x+"], "@{if M DOESNT_MATCH P}y@{else}n@{endif}", "y");
pp!(macro_doesnt_match_false, ["M=fast", "P=a"], "@{if M DOESNT_MATCH P}y@{else}n@{endif}", "n");
pp!(operand_undefined, ["M=x"], "@{if M IS O}y@{else}n@{endif}", "n", "W_UNDEFINED_MACRO@1:1");
pp!(left_undefined, [], r#"@{if U IS ""}y@{else}n@{endif}"#, "y", "W_UNDEFINED_MACRO@1:1");
pp!(
    both_undefined,
    [],
    "x\n@{if U IS V}y@{else}n@{endif}",
    "x\ny",
    "W_UNDEFINED_MACRO@2:1 W_UNDEFINED_MACRO@2:1"
);
pp!(undefined_in_matches, [], r#"@{if U MATCHES "^$"}y@{endif}"#, "y", "W_UNDEFINED_MACRO@1:1");

// JSON escapes in values and operands.
pp!(escapes_in_value, [], r#"@{define A, "q\"b\\s\nu\u00e9\tt\/"}@{A}"#, "q\"b\\s\nu\u{e9}\tt/");
pp!(escapes_surrogate_pair, [], r#"@{define A, "\ud83d\ude00"}@{A}"#, "\u{1f600}");
pp!(escapes_in_operand, [], r#"@{define A, "x\ny"}@{if A IS "x\u000ay"}y@{else}n@{endif}"#, "y");
pp!(escapes_in_pattern, ["A=a.b"], r#"@{if A MATCHES "^a\\.b$"}y@{else}n@{endif}"#, "y");
pp!(escaped_pattern_no_match, ["A=axb"], r#"@{if A MATCHES "^a\\.b$"}y@{else}n@{endif}"#, "n");
pp!(bad_escape_is_unknown, [], r#"@{define A, "\q"}"#, r#"@{define A, "\q"}"#, "E_DIRECTIVE@1:1");

// Nesting three deep, with active and inactive parents.
pp!(
    nest3_all_active,
    ["A", "B", "C"],
    "@{ifdef A}\na\n@{ifdef B}\nb\n@{ifdef C}\nc\n@{endif}\n@{endif}\n@{endif}\nz\n",
    "a\nb\nc\nz\n"
);
pp!(
    nest3_inner_inactive,
    ["A", "B"],
    "@{ifdef A}\na\n@{ifdef B}\nb\n@{ifdef C}\nc\n@{else}\nnc\n@{endif}\n@{endif}\n@{endif}\n",
    "a\nb\nnc\n"
);
pp!(
    nest3_middle_inactive,
    ["A", "C"],
    "@{ifdef A}\na\n@{ifdef B}\nb\n@{ifdef C}\nc\n@{else}\nnc\n@{endif}\n@{endif}\n@{endif}\n",
    "a\n"
);
pp!(
    nest3_outer_inactive_else,
    ["B", "C"],
    "@{ifdef A}a@{ifdef B}b@{ifdef C}c@{endif}@{endif}@{else}e@{ifdef B}b@{ifndef C}c@{else}!c@{endif}@{endif}@{endif}",
    "eb!c"
);
pp!(
    inactive_parent_elif_else,
    ["M=fast"],
    r#"@{ifdef NO}@{if M IS "fast"}x@{elif M ISNT ""}y@{else}w@{endif}@{else}e@{endif}"#,
    "e"
);
pp!(inactive_parent_else, ["A"], "@{ifdef NO}@{ifdef A}x@{else}y@{endif}@{endif}z", "z");
pp!(inactive_define, [], "@{ifdef NO}@{define X}@{endif}@{ifdef X}bad@{endif}ok", "ok");
pp!(inactive_undef, ["X"], "@{ifdef NO}@{undef X}@{endif}@{ifdef X}ok@{endif}", "ok");
pp!(inactive_substitution_silent, [], "@{ifdef NO}@{U}@{endif}", "");
pp!(inactive_condition_silent, [], r#"@{ifdef NO}@{if U IS V}@{elif U IS ""}@{endif}@{endif}"#, "");
pp!(inactive_regex_silent, [], r#"@{ifdef NO}@{if U MATCHES "("}@{endif}@{endif}"#, "");
pp!(inactive_include, [], "@{ifdef NO}@[a.md] @a.md @{include \"b\"}@{endif}", "");
pp!(inactive_escape, [], "@{ifdef NO}\\@x@{endif}", "");

// Elif chains.
pp!(
    elif_first,
    ["M=a"],
    r#"@{if M IS "a"}1@{elif M IS "b"}2@{elif M IS "c"}3@{else}4@{endif}"#,
    "1"
);
pp!(
    elif_second,
    ["M=b"],
    r#"@{if M IS "a"}1@{elif M IS "b"}2@{elif M IS "c"}3@{else}4@{endif}"#,
    "2"
);
pp!(
    elif_third,
    ["M=c"],
    r#"@{if M IS "a"}1@{elif M IS "b"}2@{elif M IS "c"}3@{else}4@{endif}"#,
    "3"
);
pp!(
    elif_else,
    ["M=d"],
    r#"@{if M IS "a"}1@{elif M IS "b"}2@{elif M IS "c"}3@{else}4@{endif}"#,
    "4"
);
pp!(elif_none, ["M=d"], r#"@{if M IS "a"}1@{elif M IS "b"}2@{endif}"#, "");
pp!(elif_first_true_wins, ["M=ab"], r#"@{if M CONTAINS "a"}1@{elif M CONTAINS "b"}2@{endif}"#, "1");
pp!(elif_after_ifdef, [], r#"@{ifdef X}1@{elif U IS ""}2@{endif}"#, "2", "W_UNDEFINED_MACRO@1:12");
pp!(elif_not_evaluated_once_taken, ["M=a"], r#"@{if M IS "a"}1@{elif U IS V}2@{endif}"#, "1");
pp!(
    elif_regex_not_compiled_once_taken,
    ["M=a"],
    r#"@{if M IS "a"}1@{elif M MATCHES "("}2@{endif}"#,
    "1"
);

// Line consumption: CRLF, indentation, inline directives.
pp!(crlf_active, ["A"], "@{ifdef A}\r\nx\r\n@{endif}\r\ny\r\n", "x\r\ny\r\n");
pp!(crlf_inactive, [], "@{ifdef A}\r\nx\r\n@{else}\r\nz\r\n@{endif}\r\ny\r\n", "z\r\ny\r\n");
pp!(crlf_define, [], "a\r\n@{define A, \"v\"}\r\n@{A}\r\n", "a\r\nv\r\n");
pp!(indented_spaces, ["A"], "  @{ifdef A}  \n  x\n    @{endif}\ny", "  x\ny");
pp!(indented_tabs, ["A"], "\t@{ifdef A}\t\n\tx\n\t\t@{endif}\t\r\ny", "\tx\ny");
pp!(alone_at_end_of_text, ["A"], "@{ifdef A}\nx\n  @{endif}", "x\n");
pp!(alone_at_start, [], "@{define A}\nx", "x");
pp!(only_directive, [], "@{define A}", "");
pp!(blank_lines_kept, [], "a\n\n@{define A}\n\nb", "a\n\n\nb");
pp!(inline_active, ["A"], "a @{ifdef A}b@{endif} c\n", "a b c\n");
pp!(inline_inactive, [], "a @{ifdef A}b@{endif} c\n", "a  c\n");
pp!(inline_text_after, [], "@{define A} x\n", " x\n");
pp!(inline_text_before, [], "x @{define A}\ny", "x \ny");
pp!(two_on_a_line, ["A"], "@{ifdef A}@{endif}\nz", "\nz");
pp!(inline_block_across_lines, ["A"], "a @{ifdef A}\nb\n@{endif} c", "a \nb\n c");
pp!(inline_inactive_across_lines, [], "a @{ifdef A}\nb\n@{endif} c", "a  c");
pp!(other_blanks_not_alone, [], "\u{a0}@{define A}\nx", "\u{a0}\nx");
pp!(multibyte_position, [], "é\u{1f600} @{U}", "é\u{1f600} @{U}", "W_UNDEFINED_MACRO@1:4");

// Errors and their recovery.
pp!(stray_endif, [], "a\n@{endif}\nb", "a\nb", "E_DIRECTIVE@2:1");
pp!(stray_else, [], "a @{else} b", "a  b", "E_DIRECTIVE@1:3");
pp!(stray_elif, [], "a\n  @{elif U IS V}\nb", "a\nb", "E_DIRECTIVE@2:3");
pp!(
    else_after_else_active,
    ["A"],
    "@{ifdef A}a@{else}b@{else}c@{endif}d",
    "ad",
    "E_DIRECTIVE@1:20"
);
pp!(
    else_after_else_inactive,
    [],
    "@{ifdef A}a@{else}b@{else}c@{endif}d",
    "bcd",
    "E_DIRECTIVE@1:20"
);
pp!(
    elif_after_else,
    ["M=x"],
    r#"@{ifdef A}a@{else}b@{elif M IS "x"}c@{endif}d"#,
    "bcd",
    "E_DIRECTIVE@1:20"
);
pp!(
    elif_after_else_in_inactive_parent,
    [],
    "@{ifdef A}@{ifdef B}@{else}@{elif U IS V}@{endif}@{endif}x",
    "x",
    "E_DIRECTIVE@1:28"
);
pp!(open_block_active, ["A"], "@{ifdef A}\nx\n", "x\n", "E_DIRECTIVE@1:1");
pp!(open_block_inactive, [], "a\n@{ifdef A}\nx\n", "a\n", "E_DIRECTIVE@2:1");
pp!(
    open_blocks_nested,
    ["A"],
    "@{ifdef A}\n@{ifndef B}\nx\n@{else}\ny\n",
    "x\n",
    "E_DIRECTIVE@1:1 E_DIRECTIVE@2:1"
);
pp!(unknown_stays, [], "a @{bogus thing} b", "a @{bogus thing} b", "E_DIRECTIVE@1:3");
pp!(unknown_keeps_line, [], "@{bogus thing}\nx", "@{bogus thing}\nx", "E_DIRECTIVE@1:1");
pp!(lowercase_name_substitutes, ["bogus=v"], "@{bogus}", "v");
pp!(
    unknown_lowercase_op,
    [],
    "@{if A is \"x\"}y@{endif}",
    "@{if A is \"x\"}y",
    "E_DIRECTIVE@1:1 E_DIRECTIVE@1:16"
);
pp!(unknown_in_inactive, [], "@{ifdef A}@{1bogus}@{endif}x", "x", "E_DIRECTIVE@1:11");
pp!(unterminated_forwarded, [], "a @{ifdef A", "a @{ifdef A", "W_UNTERMINATED@1:3");
pp!(bad_regex, ["M=x"], r#"@{if M MATCHES "("}y@{else}n@{endif}"#, "n", "E_REGEX@1:1");
pp!(
    bad_regex_doesnt_match,
    ["M=x"],
    r#"@{if M DOESNT_MATCH "("}y@{else}n@{endif}"#,
    "n",
    "E_REGEX@1:1"
);
pp!(
    bad_regex_each_occurrence,
    ["M=x"],
    "@{if M MATCHES \"[\"}1@{endif}\n@{if M DOESNT_MATCH \"[\"}2@{endif}",
    "\n",
    "E_REGEX@1:1 E_REGEX@2:1"
);
pp!(bad_regex_macro, ["M=x", "P=a)"], "@{if M MATCHES P}y@{else}n@{endif}", "n", "E_REGEX@1:1");
pp!(
    bad_regex_elif,
    ["M=x"],
    r#"@{if M IS "y"}1@{elif M MATCHES "*"}2@{else}3@{endif}"#,
    "3",
    "E_REGEX@1:16"
);
pp!(
    hostile_regex,
    ["M=x"],
    r#"@{if M MATCHES "\\w{1000}{1000}"}y@{else}n@{endif}"#,
    "n",
    "E_REGEX@1:1"
);
pp!(
    hostile_nesting,
    ["M=x"],
    r#"@{if M MATCHES "((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))"}y@{endif}"#,
    ""
);

// Escapes and code.
pp!(escape_inline, ["A=v"], "\\@{A} @{A}", "@{A} v");
pp!(escape_double_backslash, ["A=v"], "\\\\@{A}", "\\v");
pp!(escape_mention, [], "\\@a.md", "@a.md");
pp!(code_span_literal, [], "`@{ifdef A}` x", "`@{ifdef A}` x");
pp!(code_fence_literal, [], "@{define A}\n```\n@{A}\n```\n@{A}", "```\n@{A}\n```\n");
pp!(code_fence_inactive, [], "@{ifdef A}\n```\n@{endif}\n```\n@{endif}\nx", "x");

// The examples of docs/preprocessor.md.
pp!(
    doc_at_a_glance,
    ["MODE=fast"],
    "@{define AUDIENCE, \"reviewers\"}\n# Notes for @{AUDIENCE}\n\n@{ifdef DEBUG}\nShow the debug log: @[logs/debug.txt]\n@{elif MODE IS \"fast\"}\nSkip the slow checks.\n@{else}\nRun every check in @{include \"checks.md\"}.\n@{endif}\n",
    "# Notes for reviewers\n\nSkip the slow checks.\n"
);
pp!(
    doc_escapes,
    [],
    "@{define GREETING, \"Hello,\\n\\u00e9t\\u00e9 \\\"2025\\\"\"}\n@{GREETING}\n",
    "Hello,\nété \"2025\"\n"
);
pp!(
    doc_lines,
    [],
    "Steps:\n    @{ifdef VERBOSE}\n  - explain each step\n    @{endif}\n  - run\nMode: @{ifdef FAST}fast@{else}careful@{endif}.\n",
    "Steps:\n  - run\nMode: careful.\n"
);
pp!(
    doc_conditions,
    ["OS=linux", "BRANCH=main", "EXPECTED=1", "ACTUAL=2"],
    "@{if OS MATCHES \"^(linux|macos)$\"}\nUse `make`.\n@{elif OS IS \"windows\"}\nUse `nmake`.\n@{endif}\n\n@{if BRANCH DOESNT_CONTAIN \"release/\"}\nThis is a development build.\n@{endif}\n\n@{if EXPECTED ISNT ACTUAL}\nThe values differ.\n@{endif}\n",
    "Use `make`.\n\nThis is a development build.\n\nThe values differ.\n"
);
pp!(doc_recall_is_unknown, ["A=v"], "@{recall A}", "@{recall A}", "E_DIRECTIVE@1:1");
