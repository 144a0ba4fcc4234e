/**
 * The read-cache topic of the template tables (`templates`, `template_versions`): every unit of
 * work that writes them says so (`tx.changed`): the service's authoring units and an install's or
 * uninstall's count of a template's installs (install-service.ts).
 */
export const TEMPLATES_TOPIC = 'templates.catalog';
