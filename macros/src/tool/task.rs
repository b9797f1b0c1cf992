//! Lowering `task`, `task = "required"` and `task_after = ".."` of `#[action(..)]` into the
//! model's [`TaskMode`](super::model::TaskMode), each mistake spanned at its value.

/// `task`, `task = "required"` or `task = "optional"`, and `task_after = "key, key"`.
pub(super) fn task_mode(
    task: Option<&darling::util::SpannedValue<darling::util::Override<String>>>,
    after: Option<&darling::util::SpannedValue<String>>,
    errors: &mut darling::error::Accumulator,
) -> Option<super::model::TaskMode> {
    let Some(task) = task else {
        if let Some(after) = after {
            errors.push(
                darling::Error::custom(
                    "`task_after` applies to an action that runs as a task: add `task` (or `task = \"required\"`) beside it",
                )
                .with_span(&after.span()),
            );
        }
        return None;
    };
    let required = match task.as_ref() {
        darling::util::Override::Inherit => false,
        darling::util::Override::Explicit(mode) if mode == "optional" => false,
        darling::util::Override::Explicit(mode) if mode == "required" => true,
        darling::util::Override::Explicit(mode) => {
            errors.push(
                darling::Error::custom(format!(
                    "unknown task mode {mode:?}: write `task` (a task for a client that declared the tasks extension, inline for others) or `task = \"required\"` (only as a task)"
                ))
                .with_span(&task.span()),
            );
            false
        }
    };
    let after_keys = |after: &darling::util::SpannedValue<String>| -> Vec<String> {
        let keys: Vec<String> = (after.split(','))
            .map(|key| key.trim().to_owned())
            .filter(|key| !key.is_empty())
            .collect();
        if keys.is_empty() {
            errors.push(
                darling::Error::custom(
                    "`task_after` names the input keys a request answers before the call becomes a task: `task_after = \"user_name\"` (several separated by commas)",
                )
                .with_span(&after.span()),
            );
        }
        keys
    };
    let after = after.map(after_keys).unwrap_or_default();
    Some(super::model::TaskMode { required, after })
}
