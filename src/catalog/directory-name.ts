/**
 * The directory's name as makers and visitors read it: in every page's title and header, on the
 * badge image, and in the badge markup's alt text.
 */
export const DIRECTORY_NAME = 'Product directory';
