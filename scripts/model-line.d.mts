export function modelLine(input: { apiKey: string; baseUrl: string | undefined; emulator: string }): string;
