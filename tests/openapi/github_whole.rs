//! Every operation of GitHub's REST API description (`@octokit/openapi` 23.0.2, 1,223
//! operations), as MCP tools: built by scripts/openapi.sh to prove the whole description
//! compiles. The 25 operations whose ids pass 64 characters in snake case are renamed (the list
//! comes from bench/openapi-renames.py).

mod serve;

mod github {
    mcp_runtime::openapi!(
        "../../.cache/openapi/node_modules/@octokit/openapi/generated/api.github.com.json",
        rename = [
            (
                "actions/get-fork-pr-contributor-approval-permissions-organization",
                "actions_get_fork_pr_contributor_approval_permissions"
            ),
            (
                "actions/set-fork-pr-contributor-approval-permissions-organization",
                "actions_set_fork_pr_contributor_approval_permissions"
            ),
            (
                "actions/list-selected-repositories-enabled-github-actions-organization",
                "actions_list_selected_repositories_enabled_github_actions"
            ),
            (
                "actions/set-selected-repositories-enabled-github-actions-organization",
                "actions_set_selected_repositories_enabled_github_actions"
            ),
            (
                "actions/list-selected-repositories-self-hosted-runners-organization",
                "actions_list_selected_repositories_self_hosted_runners"
            ),
            (
                "actions/set-selected-repositories-self-hosted-runners-organization",
                "actions_set_selected_repositories_self_hosted_runners"
            ),
            (
                "actions/enable-selected-repository-self-hosted-runners-organization",
                "actions_enable_selected_repository_self_hosted_runners"
            ),
            (
                "actions/disable-selected-repository-self-hosted-runners-organization",
                "actions_disable_selected_repository_self_hosted_runners"
            ),
            (
                "actions/get-github-actions-default-workflow-permissions-organization",
                "actions_get_github_actions_default_workflow_permissions"
            ),
            (
                "actions/set-github-actions-default-workflow-permissions-organization",
                "actions_set_github_actions_default_workflow_permissions"
            ),
            (
                "copilot/list-copilot-coding-agent-selected-repositories-for-organization",
                "copilot_list_copilot_coding_agent_selected_repositories_for"
            ),
            (
                "copilot/set-copilot-coding-agent-selected-repositories-for-organization",
                "copilot_set_copilot_coding_agent_selected_repositories_for"
            ),
            (
                "copilot/enable-copilot-coding-agent-for-repository-in-organization",
                "copilot_enable_copilot_coding_agent_for_repository_in"
            ),
            (
                "copilot/disable-copilot-coding-agent-for-repository-in-organization",
                "copilot_disable_copilot_coding_agent_for_repository_in"
            ),
            (
                "packages/list-docker-migration-conflicting-packages-for-organization",
                "packages_list_docker_migration_conflicting_packages_for"
            ),
            (
                "orgs/custom-properties-for-repos-create-or-update-organization-definitions",
                "orgs_custom_properties_for_repos_create_or_update_organization"
            ),
            (
                "orgs/custom-properties-for-repos-create-or-update-organization-definition",
                "orgs_custom_properties_for_repos_create_or_update_organizati_2"
            ),
            (
                "orgs/custom-properties-for-repos-create-or-update-organization-values",
                "orgs_custom_properties_for_repos_create_or_update_organizati_3"
            ),
            (
                "actions/get-github-actions-default-workflow-permissions-repository",
                "actions_get_github_actions_default_workflow_permissions_2"
            ),
            (
                "actions/set-github-actions-default-workflow-permissions-repository",
                "actions_set_github_actions_default_workflow_permissions_2"
            ),
            (
                "actions/remove-all-custom-labels-from-self-hosted-runner-for-repo",
                "actions_remove_all_custom_labels_from_self_hosted_runner_for"
            ),
            (
                "codespaces/list-devcontainers-in-repository-for-authenticated-user",
                "codespaces_list_devcontainers_in_repository_for_authenticated"
            ),
            (
                "repos/custom-properties-for-repos-create-or-update-repository-values",
                "repos_custom_properties_for_repos_create_or_update_repository"
            ),
            (
                "packages/list-docker-migration-conflicting-packages-for-authenticated-user",
                "packages_list_docker_migration_conflicting_packages_for_2"
            ),
            (
                "packages/get-all-package-versions-for-package-owned-by-authenticated-user",
                "packages_get_all_package_versions_for_package_owned_by"
            )
        ],
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    serve::serve("github", &github::API).await
}
