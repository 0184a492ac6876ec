/** An entry of a label set, as GET /label/templates/{name} returns it (color without '#'). */
export interface LabelTemplate {
  name: string;
  exclusive: boolean;
  color: string;
  description: string;
}

// Gitea's options/label/Default and Advanced.yaml: same names, colors, descriptions, exclusive flags.
const LABEL_SETS: Record<string, LabelTemplate[]> = {
  Advanced: [
    { name: 'Kind/Bug', exclusive: false, color: 'ee0701', description: 'Something is not working' },
    { name: 'Kind/Feature', exclusive: false, color: '0288d1', description: 'New functionality' },
    { name: 'Kind/Enhancement', exclusive: false, color: '84b6eb', description: 'Improve existing functionality' },
    { name: 'Kind/Security', exclusive: false, color: '9c27b0', description: 'This is security issue' },
    { name: 'Kind/Testing', exclusive: false, color: '795548', description: 'Issue or pull request related to testing' },
    { name: 'Kind/Documentation', exclusive: false, color: '37474f', description: 'Documentation changes' },
    { name: 'Compat/Breaking', exclusive: false, color: 'c62828', description: "Breaking change that won't be backward compatible" },
    { name: 'Reviewed/Duplicate', exclusive: true, color: '616161', description: 'This issue or pull request already exists' },
    { name: 'Reviewed/Invalid', exclusive: true, color: '546e7a', description: 'Invalid issue' },
    { name: 'Reviewed/Confirmed', exclusive: true, color: '795548', description: 'Issue has been confirmed' },
    { name: "Reviewed/Won't Fix", exclusive: true, color: 'eeeeee', description: "This issue won't be fixed" },
    { name: 'Status/Need More Info', exclusive: true, color: '424242', description: 'Feedback is required to reproduce issue or to continue work' },
    { name: 'Status/Blocked', exclusive: true, color: '880e4f', description: 'Something is blocking this issue or pull request' },
    { name: 'Status/Abandoned', exclusive: true, color: '222222', description: 'Somebody has started to work on this but abandoned work' },
    { name: 'Priority/Critical', exclusive: true, color: 'b71c1c', description: 'The priority is critical' },
    { name: 'Priority/High', exclusive: true, color: 'd32f2f', description: 'The priority is high' },
    { name: 'Priority/Medium', exclusive: true, color: 'e64a19', description: 'The priority is medium' },
    { name: 'Priority/Low', exclusive: true, color: '4caf50', description: 'The priority is low' },
  ],
  Default: [
    { name: 'bug', exclusive: false, color: 'ee0701', description: 'Something is not working' },
    { name: 'duplicate', exclusive: false, color: 'cccccc', description: 'This issue or pull request already exists' },
    { name: 'enhancement', exclusive: false, color: '84b6eb', description: 'New feature' },
    { name: 'help wanted', exclusive: false, color: '128a0c', description: 'Need some help' },
    { name: 'invalid', exclusive: false, color: 'e6e6e6', description: 'Something is wrong' },
    { name: 'question', exclusive: false, color: 'cc317c', description: 'More information is needed' },
    { name: 'wontfix', exclusive: false, color: 'ffffff', description: "This won't be fixed" },
  ],
};

/** Display names, sorted as Gitea lists them: ["Advanced", "Default"]. */
export function labelTemplateNames(): string[] {
  return Object.keys(LABEL_SETS).sort();
}

/** The labels of a set (fresh copies), or null for an unknown set name. */
export function labelTemplate(name: string): LabelTemplate[] | null {
  const set = Object.prototype.hasOwnProperty.call(LABEL_SETS, name) ? LABEL_SETS[name] : undefined;
  return set ? set.map((l) => ({ ...l })) : null;
}
