/** Templates for new repositories and the /licenses, /gitignore, /label templates endpoints. */
export { licenseNames, licenseText, licenseTemplate } from './licenses';
export type { LicenseValues } from './licenses';
export { gitignoreNames, gitignoreText } from './gitignore';
export { labelTemplateNames, labelTemplate } from './labels';
export type { LabelTemplate } from './labels';
export { readmeNames, readmeText } from './readme';
