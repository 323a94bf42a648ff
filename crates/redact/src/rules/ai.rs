//! AI providers.

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "anthropic_api_key",
        pattern: r"sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_\-]{32,300}",
        keywords: &["sk-ant-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "openrouter_api_key",
        pattern: r"sk-or-v1-[a-f0-9]{64}",
        keywords: &["sk-or-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "openai_api_key",
        pattern: r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,300}|[A-Za-z0-9_\-]{0,150}T3BlbkFJ[A-Za-z0-9_\-]{10,150})",
        keywords: &["sk-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "huggingface_token",
        pattern: r"(?-u:\b)(?:hf_|api_org_)[A-Za-z]{34}(?-u:\b)",
        keywords: &["hf_", "api_org_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "replicate_api_token",
        pattern: r"(?-u:\b)r8_[A-Za-z0-9]{37}(?-u:\b)",
        keywords: &["r8_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "groq_api_key",
        pattern: r"(?-u:\b)gsk_[A-Za-z0-9]{52}(?-u:\b)",
        keywords: &["gsk_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "xai_api_key",
        pattern: r"(?-u:\b)xai-[A-Za-z0-9]{80}(?-u:\b)",
        keywords: &["xai-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "perplexity_api_key",
        pattern: r"(?-u:\b)pplx-[A-Za-z0-9]{48}(?-u:\b)",
        keywords: &["pplx-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_anthropic_api_key: "anthropic_api_key" => (
            "x-api-key: ", format!("{}{}AA", concat!("sk-an", "t-api03-"), rnd(74, 93, URLSAFE)), "\n"
        );
        redacts_openrouter_api_key: "openrouter_api_key" => (
            "or ", format!("{}{}", concat!("sk-o", "r-v1-"), rnd(75, 64, HEX)), " end"
        );
        redacts_openai_project_key: "openai_api_key" => (
            "OPENAI ", format!("{}{}", concat!("sk-pr", "oj-"), rnd(76, 156, URLSAFE)), " end"
        );
        redacts_huggingface_token: "huggingface_token" => (
            "hf ", format!("{}{}", concat!("h", "f_"), rnd(77, 34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")), " end"
        );
        redacts_replicate_api_token: "replicate_api_token" => (
            "rep ", format!("{}{}", concat!("r", "8_"), rnd(78, 37, ALNUM)), " end"
        );
        redacts_groq_api_key: "groq_api_key" => (
            "groq ", format!("{}{}", concat!("gs", "k_"), rnd(79, 52, ALNUM)), " end"
        );
        redacts_xai_api_key: "xai_api_key" => (
            "grok ", format!("{}{}", concat!("xa", "i-"), rnd(80, 80, ALNUM)), " end"
        );
        redacts_perplexity_api_key: "perplexity_api_key" => (
            "pplx ", format!("{}{}", concat!("pp", "lx-"), rnd(81, 48, ALNUM)), " end"
        );
    }
}
